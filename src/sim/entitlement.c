#include "sim/entitlement.h"

#include <stdbool.h>

/* Split owed[p] among p's children with demand (sub: subtree demand). */
static void split(const struct kerf_tenants *tt, int p, const int64_t *sub,
		  int64_t *owed)
{
	int64_t left = owed[p];

	for (;;) {
		int64_t w = 0;
		bool capped = false;

		for (size_t c = (size_t)p + 1; c < tt->nr; c++)
			if (tt->t[c].parent == p && owed[c] < sub[c])
				w += tt->t[c].weight;
		if (w == 0 || left == 0)
			return;
		/* whoever needs no more than its weighted part gets its need */
		for (size_t c = (size_t)p + 1; c < tt->nr; c++) {
			int64_t need = sub[c] - owed[c];

			if (tt->t[c].parent != p || need <= 0 ||
			    need * w > left * (int64_t)tt->t[c].weight)
				continue;
			owed[c] = sub[c];
			left -= need;
			capped = true;
		}
		if (capped)
			continue;
		/*
		 * everyone left wants more than its part: split by weight (no
		 * part reaches its need, so the set stays the same)
		 */
		{
			int64_t total = left;

			for (size_t c = (size_t)p + 1; c < tt->nr; c++) {
				int64_t part;

				if (tt->t[c].parent != p || owed[c] >= sub[c])
					continue;
				part = total * (int64_t)tt->t[c].weight / w;
				owed[c] += part;
				left -= part;
			}
		}
		/* the remainder of the division, a milli at a time in order */
		for (size_t c = (size_t)p + 1; c < tt->nr && left > 0; c++)
			if (tt->t[c].parent == p && owed[c] < sub[c]) {
				owed[c]++;
				left--;
			}
		return;
	}
}

void kerf_entitlement(const struct kerf_tenants *tt, int64_t capacity,
		      const int64_t *demand, int64_t *owed, int64_t *scratch)
{
	int64_t *sub = scratch;

	for (size_t t = 0; t < tt->nr; t++) {
		sub[t] = demand[t] > 0 ? demand[t] : 0;
		owed[t] = 0;
	}
	/* parents come before their children */
	for (size_t t = tt->nr; t-- > 1;)
		if (tt->t[t].parent >= 0)
			sub[tt->t[t].parent] += sub[t];
	owed[KERF_TENANT_ROOT] = sub[KERF_TENANT_ROOT] < capacity
					 ? sub[KERF_TENANT_ROOT]
					 : capacity;
	for (size_t p = 0; p < tt->nr; p++)
		if (tt->t[p].nr_children > 0)
			split(tt, (int)p, sub, owed);
}
