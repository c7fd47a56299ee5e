#!/usr/bin/env python3
# Embed the dashboard's files (src/serve/ui) into kerf as a C array, at
# build time: embed.py FILE... OUT.c.  Each file is served at /ui/NAME
# with the Content-Type of its extension and a strong ETag of its bytes
# (serve/ui.h).  No build step runs on the files themselves.
import hashlib
import os
import sys

TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: embed.py FILE... OUT.c\n")
        return 2
    files, out = argv[1:-1], argv[-1]
    lines = ["/* Made by src/serve/ui/embed.py from src/serve/ui: do not edit. */",
             '#include "serve/ui.h"', ""]
    table = []
    for i, path in enumerate(sorted(files, key=os.path.basename)):
        name = os.path.basename(path)
        ext = os.path.splitext(name)[1]
        if ext not in TYPES:
            sys.stderr.write("embed.py: %s: no Content-Type for '%s'\n" % (path, ext))
            return 1
        with open(path, "rb") as f:
            data = f.read()
        etag = '"%s"' % hashlib.sha256(data).hexdigest()[:20]
        lines.append("static const unsigned char ui_%d[] = {" % i)
        for k in range(0, len(data), 16):
            lines.append("\t" + " ".join("0x%02x," % b for b in data[k:k + 16]))
        lines.append("};")
        table.append('\t{ "/ui/%s", "%s", "\\"%s\\"", ui_%d, sizeof(ui_%d) },'
                     % (name, TYPES[ext], etag.strip('"'), i, i))
    lines.append("")
    lines.append("const struct kerf_ui_asset kerf_ui_assets[] = {")
    lines.extend(table)
    lines.append("};")
    lines.append("const size_t kerf_ui_nr_assets = %d;" % len(table))
    text = "\n".join(lines) + "\n"
    with open(out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
