#include "core/mig/geometry.h"

#include <stdio.h>
#include <ctype.h>
#include <string.h>

/*
 * Placement sets ({starts}:size in nvidia-smi mig -lgipp) as bitmasks of
 * the start memory slice.
 */
#define STARTS_1M7  0x7f  /* {0,1,2,3,4,5,6}:1 */
#define STARTS_2M8  0x55  /* {0,2,4,6}:2 (1g with two memory slices) */
#define STARTS_2G   0x15  /* {0,2,4}:2 */
#define STARTS_3G   0x11  /* {0,4}:4 */
#define STARTS_0    0x01  /* {0} */
#define STARTS_1M4  0x0f  /* A30 {0,1,2,3}:1 */
#define STARTS_2M4  0x05  /* A30 {0,2}:2 */

/*
 * GiB as nvidia-smi prints them (truncated to two decimals), in MiB: up to
 * 10 MiB under the driver's figure.
 */
#define GIB(x) ((uint32_t)((x) * 1024.0 + 0.5))

/*
 * The profiles of the 8-slice GPUs (A100, H100, H200, GH200, B200) share
 * IDs, slice counts, instance counts and placements (NVIDIA MIG User
 * Guide, "Supported MIG Profiles"; placements from the nvidia-smi
 * mig -lgipp listing in "Getting Started with MIG"); names, memory and
 * SM counts differ per model.
 */
#define P8(n1, n1me, n1x2, n2, n3, n4, n7, m1, m2, m3, m7, sm1, sm1x2, sm2, sm3, sm4, sm7) \
	{ n1, 19, 1, 1, 7, STARTS_1M7, false, m1, sm1 },                 \
	{ n1me, 20, 1, 1, 1, STARTS_1M7, true, m1, sm1 },                \
	{ n1x2, 15, 1, 2, 4, STARTS_2M8, false, m2, sm1x2 },             \
	{ n2, 14, 2, 2, 3, STARTS_2G, false, m2, sm2 },                  \
	{ n3, 9, 3, 4, 2, STARTS_3G, false, m3, sm3 },                   \
	{ n4, 5, 4, 4, 1, STARTS_0, false, m3, sm4 },                    \
	{ n7, 0, 7, 8, 1, STARTS_0, false, m7, sm7 }

/*
 * A30-24GB: MIG User Guide, "Supported MIG Profiles", A30 table (4 memory
 * and 4 compute slices); IDs, memory and placements as listed by
 * nvidia-smi mig -lgip / -lgipp on the A30.
 */
static const struct kerf_mig_profile a30[] = {
	{ "1g.6gb", 14, 1, 1, 4, STARTS_1M4, false, GIB(5.81), 14 },
	{ "1g.6gb+me", 21, 1, 1, 1, STARTS_1M4, true, GIB(5.81), 14 },
	{ "2g.12gb", 5, 2, 2, 2, STARTS_2M4, false, GIB(11.69), 28 },
	{ "2g.12gb+me", 6, 2, 2, 1, STARTS_2M4, true, GIB(11.69), 28 },
	{ "4g.24gb", 0, 4, 4, 1, STARTS_0, false, GIB(23.44), 56 },
};

/*
 * A100-40GB: MIG User Guide, "Getting Started with MIG", the -lgip and
 * -lgipp listings of an A100-SXM4-40GB (1g.10gb needs R525 or later);
 * memory in MiB as NVML reports it (4.75 GiB printed = 4864 MiB).
 */
static const struct kerf_mig_profile a100_40[] = {
	P8("1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb",
	   4864, 9856, 19968, 40192, 14, 14, 28, 42, 56, 98),
};

/*
 * A100-80GB: MIG User Guide, "Supported MIG Profiles" (names and instance
 * counts for A100-SXM4-80GB); the same GA100 geometry as the 40GB.  No
 * listing of the memory sizes was published: 0.
 */
static const struct kerf_mig_profile a100_80[] = {
	P8("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
	   0, 0, 0, 0, 14, 14, 28, 42, 56, 98),
};

/*
 * H100-80GB (SXM5 and PCIe): MIG User Guide, "Supported MIG Profiles",
 * "H100 80GB" table; memory and SMs as nvidia-smi mig -lgip lists them.
 * SMs do not follow the "g" number on Hopper (1g.20gb has 26).
 */
static const struct kerf_mig_profile h100_80[] = {
	P8("1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
	   GIB(9.75), GIB(19.62), GIB(39.50), GIB(79.25), 16, 26, 32, 60, 64, 132),
};

/* H100 NVL 94GB: MIG User Guide, "H100 94GB (PCIe and SXM5)" table. */
static const struct kerf_mig_profile h100_94[] = {
	P8("1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb",
	   GIB(10.75), GIB(21.62), GIB(46.38), GIB(93.12), 16, 26, 32, 60, 64, 132),
};

/* H100 96GB on GH200: MIG User Guide, "H100 96GB (H100 on GH200)" table. */
static const struct kerf_mig_profile h100_96[] = {
	P8("1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.48gb", "4g.48gb", "7g.96gb",
	   GIB(11.00), GIB(23.00), GIB(46.50), GIB(93.00), 16, 26, 32, 60, 64, 132),
};

/*
 * GH200 144GB HBM3e: MIG User Guide, "Supported MIG Profiles"; the
 * memory of 3g, 4g and 7g was not published: 0.
 */
static const struct kerf_mig_profile gh200_144[] = {
	P8("1g.18gb", "1g.18gb+me", "1g.36gb", "2g.36gb", "3g.72gb", "4g.72gb", "7g.144gb",
	   GIB(17.50), GIB(35.25), 0, 0, 16, 26, 32, 60, 64, 132),
};

/* H200 141GB: MIG User Guide, "Supported MIG Profiles", "H200 141GB" table. */
static const struct kerf_mig_profile h200_141[] = {
	P8("1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb",
	   GIB(16.00), GIB(32.25), GIB(69.50), GIB(139.75), 16, 26, 32, 60, 64, 132),
};

/*
 * B200 180GB: MIG User Guide, "Supported MIG Profiles", "B200 180GB"
 * table (1g.45gb has two memory slices); memory and SMs of 3g, 4g and 7g
 * were not published: 0.  4g.90gb depends on the driver.
 */
static const struct kerf_mig_profile b200_180[] = {
	P8("1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb",
	   GIB(22.00), GIB(44.25), 0, 0, 18, 30, 36, 0, 0, 0),
};

#define NR(a) ((uint8_t)(sizeof(a) / sizeof((a)[0])))

static const struct kerf_mig_model models[] = {
	{ "A30-24GB", "A30|NVIDIA A30", { 0x20B710DE }, 4, 4, 24576, a30, NR(a30),
	  "NVIDIA MIG User Guide, Supported MIG Profiles: A30" },
	{ "A100-40GB",
	  "A100-SXM4-40GB|A100-PCIE-40GB|NVIDIA A100-SXM4-40GB|NVIDIA A100-PCIE-40GB|A800-40GB",
	  { 0x20B010DE, 0x20B110DE, 0x20F110DE, 0x20F610DE }, 8, 7, 40960, a100_40,
	  NR(a100_40), "NVIDIA MIG User Guide, Getting Started with MIG: A100-SXM4-40GB" },
	{ "A100-80GB",
	  "A100-SXM4-80GB|A100-PCIE-80GB|NVIDIA A100-SXM4-80GB|NVIDIA A100 80GB PCIe|A800-80GB",
	  { 0x20B210DE, 0x20B510DE, 0x20F310DE, 0x20F510DE }, 8, 7, 81920, a100_80,
	  NR(a100_80), "NVIDIA MIG User Guide, Supported MIG Profiles: A100" },
	{ "H100-80GB",
	  "H100-SXM5-80GB|H100-PCIE-80GB|NVIDIA H100 80GB HBM3|NVIDIA H100 PCIe|H800-80GB",
	  { 0x233010DE, 0x233110DE, 0x232210DE, 0x232410DE }, 8, 7, 81920, h100_80,
	  NR(h100_80), "NVIDIA MIG User Guide, Supported MIG Profiles: H100 80GB" },
	{ "H100-94GB", "H100-NVL|NVIDIA H100 NVL|H800-NVL", { 0x232110DE, 0x233A10DE },
	  8, 7, 96256, h100_94, NR(h100_94),
	  "NVIDIA MIG User Guide, Supported MIG Profiles: H100 94GB" },
	{ "H100-96GB", "GH200-96GB|NVIDIA GH200 480GB", { 0x234210DE, 0x233D10DE }, 8, 7,
	  98304, h100_96, NR(h100_96),
	  "NVIDIA MIG User Guide, Supported MIG Profiles: H100 96GB (GH200)" },
	{ "GH200-144GB", "NVIDIA GH200 144G HBM3e", { 0x234810DE }, 8, 7, 147456,
	  gh200_144, NR(gh200_144), "NVIDIA MIG User Guide, Supported MIG Profiles: GH200" },
	{ "H200-141GB", "H200|NVIDIA H200|H200-NVL|NVIDIA H200 NVL",
	  { 0x233510DE, 0x233B10DE }, 8, 7, 144384, h200_141, NR(h200_141),
	  "NVIDIA MIG User Guide, Supported MIG Profiles: H200 141GB" },
	{ "B200-180GB", "B200|NVIDIA B200", { 0x290110DE }, 8, 7, 184320, b200_180,
	  NR(b200_180), "NVIDIA MIG User Guide, Supported MIG Profiles: B200 180GB" },
};

const struct kerf_mig_model *kerf_mig_models(size_t *nr)
{
	*nr = sizeof(models) / sizeof(models[0]);
	return models;
}

/*
 * The same name, without case, a space and a '-' alike: NVML says
 * "NVIDIA H100 80GB HBM3", GPU feature discovery's nvidia.com/gpu.product
 * label "NVIDIA-H100-80GB-HBM3".
 */
static bool same_name(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i] == ' ' ? '-' : a[i], y = b[i] == ' ' ? '-' : b[i];

		if (tolower((unsigned char)x) != tolower((unsigned char)y))
			return false;
	}
	return true;
}

/* Is name one of the '|'-separated names in list (see same_name)? */
static bool in_list(const char *list, const char *name)
{
	size_t len = strlen(name);

	while (list && *list) {
		const char *end = strchr(list, '|');
		size_t n = end ? (size_t)(end - list) : strlen(list);

		if (n == len && same_name(list, name, n))
			return true;
		list = end ? end + 1 : NULL;
	}
	return false;
}

const struct kerf_mig_model *kerf_mig_model_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if ((strlen(models[i].name) == strlen(name) &&
		     same_name(models[i].name, name, strlen(name))) ||
		    in_list(models[i].aliases, name))
			return &models[i];
	return NULL;
}

int kerf_mig_profile_find(const struct kerf_mig_model *m, const char *name)
{
	if (!m || !name)
		return -1;
	for (int p = 0; p < m->nr_profiles; p++)
		if (!strcmp(m->profiles[p].name, name))
			return p;
	return -1;
}

uint32_t kerf_mig_layout_used(const struct kerf_mig_model *m,
			      const struct kerf_mig_layout *layout)
{
	uint32_t used = 0;

	for (unsigned i = 0; i < layout->nr && i < KERF_MIG_MAX_INSTANCES; i++)
		if (layout->inst[i].profile < m->nr_profiles)
			used |= kerf_mig_span(&m->profiles[layout->inst[i].profile],
					      layout->inst[i].start);
	return used;
}

/* Compute slices in use, and instances of profile p. */
static void count_layout(const struct kerf_mig_model *m,
			 const struct kerf_mig_layout *layout, unsigned p,
			 unsigned *compute, unsigned *of_p)
{
	*compute = 0;
	*of_p = 0;
	for (unsigned i = 0; i < layout->nr; i++) {
		*compute += m->profiles[layout->inst[i].profile].compute_slices;
		if (layout->inst[i].profile == p)
			(*of_p)++;
	}
}

bool kerf_mig_can_add(const struct kerf_mig_model *m,
		      const struct kerf_mig_layout *layout, unsigned p,
		      unsigned start)
{
	const struct kerf_mig_profile *pr;
	unsigned compute, of_p;

	if (p >= m->nr_profiles || start >= m->mem_slices ||
	    layout->nr >= KERF_MIG_MAX_INSTANCES)
		return false;
	pr = &m->profiles[p];
	if (!(pr->starts >> start & 1) || start + pr->mem_slices > m->mem_slices ||
	    (kerf_mig_layout_used(m, layout) & kerf_mig_span(pr, start)))
		return false;
	count_layout(m, layout, p, &compute, &of_p);
	return of_p < pr->max_instances &&
	       compute + pr->compute_slices <= m->compute_slices;
}

int kerf_mig_layout_check(const struct kerf_mig_model *m,
			  const struct kerf_mig_layout *layout,
			  struct kerf_err *err)
{
	struct kerf_mig_layout seen = { .nr = 0 };

	if (!m)
		return kerf_err_set(err, -KERF_EINVAL, "no GPU model");
	if (layout->nr > KERF_MIG_MAX_INSTANCES)
		return kerf_err_set(err, -KERF_EINVAL,
				    "%u instances: a GPU holds at most %d", layout->nr,
				    KERF_MIG_MAX_INSTANCES);
	/* add the instances one by one: each must be legal beside the ones before */
	for (unsigned i = 0; i < layout->nr; i++) {
		const struct kerf_mig_instance *in = &layout->inst[i];
		const struct kerf_mig_profile *pr;
		unsigned compute, of_p;

		if (in->profile >= m->nr_profiles)
			return kerf_err_set(err, -KERF_EINVAL,
					    "instance %u: no profile %u on %s", i,
					    in->profile, m->name);
		pr = &m->profiles[in->profile];
		if (in->start >= m->mem_slices || !(pr->starts >> in->start & 1) ||
		    in->start + pr->mem_slices > m->mem_slices)
			return kerf_err_set(err, -KERF_EINVAL,
					    "instance %u (%s at %u): %s may not start at memory slice %u on %s",
					    i, pr->name, in->start, pr->name, in->start, m->name);
		if (kerf_mig_layout_used(m, &seen) & kerf_mig_span(pr, in->start))
			return kerf_err_set(err, -KERF_EINVAL,
					    "instance %u (%s at %u): overlaps another instance's memory slices",
					    i, pr->name, in->start);
		count_layout(m, &seen, in->profile, &compute, &of_p);
		if (of_p >= pr->max_instances)
			return kerf_err_set(err, -KERF_EINVAL,
					    "instance %u (%s at %u): more than %u instances of %s",
					    i, pr->name, in->start, pr->max_instances, pr->name);
		if (compute + pr->compute_slices > m->compute_slices)
			return kerf_err_set(err, -KERF_EINVAL,
					    "instance %u (%s at %u): compute slices over the GPU's %u",
					    i, pr->name, in->start, m->compute_slices);
		seen.inst[seen.nr++] = *in;
	}
	return 0;
}

uint32_t kerf_mig_profile_mem_mib(const struct kerf_mig_model *m, unsigned p)
{
	const struct kerf_mig_profile *pr = &m->profiles[p];

	if (pr->mem_mib)
		return pr->mem_mib;
	return (uint32_t)((uint64_t)m->mem_mib * pr->mem_slices / m->mem_slices);
}

int kerf_mig_profile_for(const struct kerf_mig_model *m, unsigned slices,
			 uint32_t mem_mib)
{
	int best = -1;

	for (unsigned p = 0; p < m->nr_profiles; p++) {
		const struct kerf_mig_profile *pr = &m->profiles[p];
		const struct kerf_mig_profile *b;

		if (pr->media_ext || pr->compute_slices < slices ||
		    kerf_mig_profile_mem_mib(m, p) < mem_mib)
			continue;
		if (best < 0) {
			best = (int)p;
			continue;
		}
		b = &m->profiles[best];
		if (pr->compute_slices < b->compute_slices ||
		    (pr->compute_slices == b->compute_slices &&
		     pr->mem_slices < b->mem_slices))
			best = (int)p;
	}
	return best;
}
