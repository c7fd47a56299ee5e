/* The fake struct kerf_nft_ops: records rulesets, fails the n-th call. */
#include "net/nft.h"

#include <stdlib.h>
#include <string.h>

static int fake_apply(void *ctx, const char *text, size_t len,
		      struct kerf_err *err)
{
	struct kerf_nft_fake *f = ctx;
	if (f->nr_calls >= KERF_NFT_FAKE_MAX_CALLS)
		return kerf_err_set(err, -KERF_ELIMIT, "nft fake: more than %d calls",
				    KERF_NFT_FAKE_MAX_CALLS);
	size_t n = ++f->nr_calls;
	char *copy = malloc(len + 1);
	if (!copy)
		return kerf_err_set(err, -KERF_ENOMEM, "nft fake: out of memory");
	memcpy(copy, text, len);
	copy[len] = '\0';
	f->texts[n - 1] = copy;
	if (n == f->fail_nth) {
		int code = f->fail_code ? f->fail_code : -KERF_EIO;
		return kerf_err_set(err, code, "nft fake: call %zu fails", n);
	}
	return 0;
}

void kerf_nft_fake_ops(struct kerf_nft_fake *fake, struct kerf_nft_ops *ops)
{
	ops->ctx = fake;
	ops->apply = fake_apply;
}

void kerf_nft_fake_release(struct kerf_nft_fake *fake)
{
	for (size_t i = 0; i < fake->nr_calls; i++)
		free(fake->texts[i]);
	memset(fake, 0, sizeof(*fake));
}
