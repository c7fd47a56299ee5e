/*
 * nft: applying an nftables ruleset (docs/agent.md "DSCP marking").
 *
 * struct kerf_nft_ops is the one way kerf changes the host's packet
 * filter.  The real one runs `nft -f -` with the text on its stdin (one
 * transaction: all of it or none of it) and hands back what nft wrote on
 * stderr as the error; the fake records each ruleset and can fail the n-th
 * call, for unit tests.
 */
#ifndef KERF_NET_NFT_H
#define KERF_NET_NFT_H

#include <stddef.h>

#include "base/err.h"

struct kerf_nft_ops {
	void *ctx;
	/* Apply text[0..len); 0, or a negative error with nft's words. */
	int (*apply)(void *ctx, const char *text, size_t len,
		     struct kerf_err *err);
};

static inline int kerf_nft_apply(const struct kerf_nft_ops *ops,
				 const char *text, size_t len,
				 struct kerf_err *err)
{
	return ops->apply(ops->ctx, text, len, err);
}

/* -- the real one: exec nft ------------------------------------------- */

struct kerf_nft_exec {
	const char *nft_path;   /* "nft" (looked up in PATH) when NULL */
	int timeout_ms;         /* 0: 10000 */
};

/* ops over exec (which must outlive ops). */
void kerf_nft_exec_ops(struct kerf_nft_exec *exec, struct kerf_nft_ops *ops);

/* -- the fake ----------------------------------------------------------- */

enum { KERF_NFT_FAKE_MAX_CALLS = 64 };

struct kerf_nft_fake {
	char *texts[KERF_NFT_FAKE_MAX_CALLS];   /* each call's ruleset */
	size_t nr_calls;
	size_t fail_nth;        /* 1-based call that fails; 0: none */
	int fail_code;          /* its error; 0: -KERF_EIO */
};

void kerf_nft_fake_ops(struct kerf_nft_fake *fake, struct kerf_nft_ops *ops);
void kerf_nft_fake_release(struct kerf_nft_fake *fake);

#endif /* KERF_NET_NFT_H */
