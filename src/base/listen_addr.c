/* listen_addr: for kerf serve's endpoints and the admission webhook. */
#include "base/listen_addr.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "base/buf.h"
#include "base/parse.h"

int kerf_listen_addr_parse(const char *addr, struct sockaddr_in *sa,
			   struct kerf_err *err)
{
	const char *colon = strrchr(addr ? addr : "", ':');
	char host[64], shown[80];
	uint64_t port;

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (!colon || kerf_parse_u64(colon + 1, &port) < 0 || port > 65535 ||
	    (size_t)(colon - addr) >= sizeof(host))
		return kerf_err_set(err, -KERF_EINVAL,
				    "address '%s': expected HOST:PORT or :PORT",
				    kerf_escape(shown, sizeof(shown), addr ? addr : ""));
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = '\0';
	sa->sin_port = htons((uint16_t)port);
	if (!host[0])
		sa->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return kerf_err_set(err, -KERF_EINVAL,
				    "address '%s': the host must be an IPv4 address",
				    kerf_escape(shown, sizeof(shown), addr));
	return 0;
}
