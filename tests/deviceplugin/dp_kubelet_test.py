#!/usr/bin/env python3
"""kerf's device plugin against a real gRPC client acting as kubelet.

    dp_kubelet_test.py HARNESS PROTO_ROOT

Generates the v1beta1 messages and stubs from PROTO_ROOT's
deviceplugin/v1beta1/api.proto with grpc_tools in a temp dir, serves
Registration on <tmp>/kubelet.sock with grpcio, starts HARNESS (dp_harness)
on the same dir with one pending pod, default/p1, assigned GPUs 1 and 2, and
checks: Register's fields; GetDevicePluginOptions; ListAndWatch's list and
its resend when a device turns unhealthy; GetPreferredAllocation (kerf's
assignment first, then the NUMA node); Allocate of kerf's devices (envs, CDI
names) and the refusal of others; a kubelet restart (kubelet.sock removed
and served again) and the plugin's socket removed, each followed by a new
Register.  Then a second plugin serving shares of GPUs (dp_harness
--shares) with one pending pod, default/f1, given 250m of GPU 0 under MPS
as UID 1000: Allocate of a share gives the GPU, the MPS pipe directory
mounted and the CUDA_MPS_* variables; with the GPU's MPS daemon failed it
is refused, and answered again once the daemon is healthy.  TAP output
ending with the counts.
"""
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures

results = []


def check(cond, what):
    results.append(bool(cond))
    print(("ok" if cond else "not ok") + " %d - %s" % (len(results), what), flush=True)
    return cond


def wait_for(pred, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return pred()


def next_register(registered):
    """The next Register request the kubelet got, or None after 15 s."""
    try:
        return registered.get(timeout=15)
    except queue.Empty:
        return None


def end_harness(proc):
    """Close the harness's input (it exits) and wait for it."""
    try:
        proc.stdin.close()
        proc.wait(timeout=10)
    except Exception:
        proc.kill()
        proc.wait()


def serve_kubelet(grpc, pb, pbg, sock, registered):
    """The kubelet's Registration service on sock; each request into registered."""
    class Kubelet(pbg.RegistrationServicer):
        def Register(self, request, context):
            registered.put(request)
            return pb.Empty()

    s = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pbg.add_RegistrationServicer_to_server(Kubelet(), s)
    s.add_insecure_port("unix:" + sock)
    s.start()
    return s


def main():
    harness, proto_root = sys.argv[1], sys.argv[2]
    import grpc
    from grpc_tools import protoc

    tmp = tempfile.mkdtemp(prefix="kerf-dp-")
    proc = None
    servers = []
    try:
        gen = os.path.join(tmp, "gen")
        os.mkdir(gen)
        rc = protoc.main(["protoc", "-I" + proto_root, "--python_out=" + gen,
                          "--grpc_python_out=" + gen,
                          os.path.join(proto_root, "deviceplugin/v1beta1/api.proto")])
        if rc != 0:
            print("Bail out! protoc failed: %d" % rc)
            return 1
        sys.path.insert(0, gen)
        from deviceplugin.v1beta1 import api_pb2 as pb
        from deviceplugin.v1beta1 import api_pb2_grpc as pbg

        registered = queue.Queue()
        kubelet_sock = os.path.join(tmp, "kubelet.sock")

        def start_kubelet():
            s = serve_kubelet(grpc, pb, pbg, kubelet_sock, registered)
            servers.append(s)
            return s

        kubelet = start_kubelet()
        proc = subprocess.Popen([harness, tmp, "default/p1=1,2"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        req = next_register(registered)
        if not check(req is not None, "the plugin registers with kubelet.sock"):
            return 1
        check(req.version == "v1beta1" and req.endpoint == "kerf-gpu.sock" and
              req.resource_name == "nvidia.com/gpu",
              "Register: version v1beta1, endpoint kerf-gpu.sock, resource nvidia.com/gpu")
        check(req.options.get_preferred_allocation_available and
              not req.options.pre_start_required,
              "Register: get_preferred_allocation_available, no pre_start_required")

        chan = grpc.insecure_channel("unix:" + os.path.join(tmp, req.endpoint))
        dp = pbg.DevicePluginStub(chan)
        opts = dp.GetDevicePluginOptions(pb.Empty(), timeout=10)
        check(opts.get_preferred_allocation_available, "GetDevicePluginOptions")

        stream = dp.ListAndWatch(pb.Empty(), timeout=30)
        first = next(stream)
        devs = {d.ID: (d.health, [n.ID for n in d.topology.nodes]) for d in first.devices}
        check(devs == {"GPU-a": ("Healthy", [0]), "GPU-b": ("Healthy", [0]),
                       "GPU-c": ("Healthy", [1]), "GPU-d": ("Healthy", [1])},
              "ListAndWatch: four devices, healthy, with their NUMA nodes")
        proc.stdin.write("unhealthy GPU-d\n")
        proc.stdin.flush()
        second = next(stream)
        health = {d.ID: d.health for d in second.devices}
        check(len(second.devices) == 4 and health["GPU-d"] == "Unhealthy" and
              health["GPU-a"] == "Healthy",
              "ListAndWatch: the full list again when GPU-d turns unhealthy")
        stream.cancel()

        pref = dp.GetPreferredAllocation(pb.PreferredAllocationRequest(container_requests=[
            pb.ContainerPreferredAllocationRequest(
                available_deviceIDs=["GPU-a", "GPU-b", "GPU-c", "GPU-d"], allocation_size=2)]),
            timeout=10)
        check(list(pref.container_responses[0].deviceIDs) == ["GPU-b", "GPU-c"],
              "GetPreferredAllocation: kerf's assignment of default/p1 (GPUs 1,2)")
        pref = dp.GetPreferredAllocation(pb.PreferredAllocationRequest(container_requests=[
            pb.ContainerPreferredAllocationRequest(
                available_deviceIDs=["GPU-a", "GPU-c", "GPU-d"],
                must_include_deviceIDs=["GPU-d"], allocation_size=2)]),
            timeout=10)
        check(list(pref.container_responses[0].deviceIDs) == ["GPU-d", "GPU-c"],
              "GetPreferredAllocation: no assignment fits, so must_include then its NUMA node")

        resp = dp.Allocate(pb.AllocateRequest(container_requests=[
            pb.ContainerAllocateRequest(devices_ids=["GPU-b", "GPU-c"])]), timeout=10)
        c = resp.container_responses[0]
        check(dict(c.envs) == {"NVIDIA_VISIBLE_DEVICES": "GPU-b,GPU-c"} and
              [d.name for d in c.cdi_devices] == ["nvidia.com/gpu=GPU-b", "nvidia.com/gpu=GPU-c"],
              "Allocate of kerf's GPUs: NVIDIA_VISIBLE_DEVICES and CDI names")
        try:
            dp.Allocate(pb.AllocateRequest(container_requests=[
                pb.ContainerAllocateRequest(devices_ids=["GPU-a", "GPU-b"])]), timeout=10)
            check(False, "Allocate of GPUs kerf did not assign is refused")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.FAILED_PRECONDITION and
                  "allocation refused" in e.details() and "GPUs 0,1" in e.details(),
                  "Allocate of GPUs kerf did not assign is refused: %s %s" %
                  (e.code(), e.details()))
        try:
            dp.Allocate(pb.AllocateRequest(container_requests=[
                pb.ContainerAllocateRequest(devices_ids=["GPU-zz"])]), timeout=10)
            check(False, "Allocate of an unknown device is refused")
        except grpc.RpcError as e:
            check("GPU-zz" in e.details(), "Allocate of an unknown device is refused")
        chan.close()

        # A kubelet restart: its socket removed, then served again.
        kubelet.stop(0).wait()
        if os.path.exists(kubelet_sock):
            os.unlink(kubelet_sock)
        time.sleep(0.2)
        start_kubelet()
        again = next_register(registered)
        check(again is not None and again.endpoint == "kerf-gpu.sock",
              "after a kubelet restart the plugin registers again")

        # The plugin's own socket removed: it serves again and registers.
        own = os.path.join(tmp, "kerf-gpu.sock")
        os.unlink(own)
        check(wait_for(lambda: os.path.exists(own), 10), "its socket removed, the plugin serves again")
        third = next_register(registered)
        check(third is not None, "and registers again")
        chan = grpc.insecure_channel("unix:" + own)
        opts = pbg.DevicePluginStub(chan).GetDevicePluginOptions(pb.Empty(), timeout=10)
        check(opts.get_preferred_allocation_available, "the new socket answers")
        chan.close()
        return mps_shares(harness, grpc, pb, pbg, tmp)
    finally:
        if proc:
            end_harness(proc)
        for s in servers:
            s.stop(0)
        shutil.rmtree(tmp, ignore_errors=True)
        passed = sum(results)
        print("1..%d" % len(results))
        print("# %d passed, %d failed" % (passed, len(results) - passed))


def mps_shares(harness, grpc, pb, pbg, tmp):
    """Allocate of an MPS share, refused while the GPU's daemon is failed."""
    d = os.path.join(tmp, "shares")
    os.mkdir(d)
    registered = queue.Queue()
    s = serve_kubelet(grpc, pb, pbg, os.path.join(d, "kubelet.sock"), registered)
    proc = subprocess.Popen([harness, "--shares", d,
                             "default/f1=0+fraction=250m+sharing=mps+uid=1000"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        req = next_register(registered)
        if not check(req is not None, "shares: the plugin registers"):
            return 1
        chan = grpc.insecure_channel("unix:" + os.path.join(d, req.endpoint))
        dp = pbg.DevicePluginStub(chan)

        def allocate(dev):
            return dp.Allocate(pb.AllocateRequest(container_requests=[
                pb.ContainerAllocateRequest(devices_ids=[dev])]), timeout=10)

        def command(line):
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            while True:
                out = proc.stdout.readline()
                if not out or out.strip() == "done":
                    return

        pipe = "/run/kerf/mps/GPU-a/1000/pipe"
        c = allocate("GPU-a::1").container_responses[0]
        check(dict(c.envs) == {"NVIDIA_VISIBLE_DEVICES": "GPU-a",
                               "CUDA_MPS_PIPE_DIRECTORY": pipe,
                               "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "25",
                               "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": "0=20389M"} and
              [d.name for d in c.cdi_devices] == ["nvidia.com/gpu=GPU-a"],
              "Allocate of an MPS share: the GPU and the CUDA_MPS_* variables: %s" %
              dict(c.envs))
        check([(m.container_path, m.host_path, m.read_only) for m in c.mounts] ==
              [(pipe, pipe, False)], "Allocate of an MPS share: the pipe directory mounted")
        command("mps-fail 0")
        for dev, why, what in [
                ("GPU-a::0", "the MPS daemon of GPU 0 (UID 1000) has failed",
                 "Allocate of an MPS share refused while the daemon is failed"),
                ("GPU-c::0", "no pending pod on this node has a fraction of it",
                 "Allocate of a share of a GPU no pod has is refused")]:
            try:
                allocate(dev)
                check(False, what)
            except grpc.RpcError as e:
                check(e.code() == grpc.StatusCode.FAILED_PRECONDITION and why in e.details(),
                      "%s: %s" % (what, e.details()))
        command("mps-ok 0")
        c = allocate("GPU-a::0").container_responses[0]
        check(dict(c.envs).get("CUDA_MPS_PIPE_DIRECTORY") == pipe,
              "Allocate of an MPS share answered again once the daemon is healthy")
        chan.close()
        return 0
    finally:
        end_harness(proc)
        s.stop(0)


if __name__ == "__main__":
    rc = main()
    sys.exit(1 if rc or not all(results) or not results else 0)
