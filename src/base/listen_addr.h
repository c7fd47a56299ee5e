/*
 * listen_addr: the address a server listens on, as its option is written:
 * "HOST:PORT" with an IPv4 host, or ":PORT" for every address.
 */
#ifndef KERF_BASE_LISTEN_ADDR_H
#define KERF_BASE_LISTEN_ADDR_H

#include <netinet/in.h>

#include "base/err.h"

/* addr into *sa.  Returns 0 or -KERF_EINVAL, err quoting addr. */
int kerf_listen_addr_parse(const char *addr, struct sockaddr_in *sa,
			   struct kerf_err *err)
	__attribute__((warn_unused_result));

#endif /* KERF_BASE_LISTEN_ADDR_H */
