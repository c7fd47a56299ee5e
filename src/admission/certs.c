/*
 * certs: loading and hot reload of the serving pair.  Files are stat'ed
 * before they are read, so a file replaced during the read is seen as
 * changed at the next check and read again.  A certificate and key
 * written one after the other (a Secret volume swaps both at once, a
 * person copying files does not) may be tried half-written: that try is
 * refused and counted, and the next check, seeing the second file
 * changed, loads the pair.
 */
#include "admission/certs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <gnutls/x509.h>

struct kerf_webhook_pair {
	gnutls_pcert_st pcert[KERF_WEBHOOK_CHAIN_MAX];
	unsigned nr_pcert;
	gnutls_privkey_t key;
	int64_t not_after_s;
	unsigned pins;                  /* connections accepted while current */
	struct kerf_webhook_pair *next; /* in the retired list */
};

static void logf_(struct kerf_webhook_certs *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logf_(struct kerf_webhook_certs *c, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (c->log)
		c->log(c->log_ctx, line);
}

static void file_id(const char *path, struct kerf_webhook_file_id *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (stat(path, &st) < 0)
		return;
	id->exists = true;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
		       st.st_mtim.tv_nsec;
}

static bool same_id(const struct kerf_webhook_file_id *a,
		    const struct kerf_webhook_file_id *b)
{
	return a->exists == b->exists && a->dev == b->dev &&
	       a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

/* The whole file, at most 1 MiB, into out (malloc'd). */
static int read_pem(const char *what, const char *path, gnutls_datum_t *out,
		    struct kerf_err *err)
{
	char shown[256];
	FILE *f = fopen(path, "rb");
	char *data;
	size_t n;

	kerf_escape(shown, sizeof(shown), path);
	if (!f)
		return kerf_err_set(err, -KERF_EIO, "%s '%s': %s", what, shown,
				    strerror(errno));
	data = malloc(KERF_WEBHOOK_PEM_MAX_BYTES + 1);
	if (!data) {
		fclose(f);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	n = fread(data, 1, KERF_WEBHOOK_PEM_MAX_BYTES + 1, f);
	if (ferror(f) || n > KERF_WEBHOOK_PEM_MAX_BYTES || n == 0) {
		int bad = ferror(f);

		fclose(f);
		free(data);
		return kerf_err_set(err, -KERF_EIO, "%s '%s': %s", what, shown,
				    bad ? "read error" :
				    n ? "larger than 1 MiB" : "empty file");
	}
	fclose(f);
	data[n] = '\0';
	out->data = (unsigned char *)data;
	out->size = (unsigned)n;
	return 0;
}

static void pair_free(struct kerf_webhook_pair *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->nr_pcert; i++)
		gnutls_pcert_deinit(&p->pcert[i]);
	if (p->key)
		gnutls_privkey_deinit(p->key);
	free(p);
}

/* Whether key is the private key of the certificate's public key. */
static int key_matches(gnutls_privkey_t key, gnutls_pubkey_t cert_pub,
		       bool *match)
{
	unsigned char a[64], b[64];
	size_t na = sizeof(a), nb = sizeof(b);
	gnutls_pubkey_t pub;
	int rc;

	*match = false;
	if (gnutls_pubkey_init(&pub) < 0)
		return -KERF_ENOMEM;
	rc = gnutls_pubkey_import_privkey(pub, key, 0, 0);
	if (rc == 0)
		rc = gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, a,
					      &na);
	if (rc == 0)
		rc = gnutls_pubkey_get_key_id(cert_pub, GNUTLS_KEYID_USE_SHA256,
					      b, &nb);
	gnutls_pubkey_deinit(pub);
	if (rc < 0)
		return -KERF_EIO;
	*match = na == nb && !memcmp(a, b, na);
	return 0;
}

/* The leaf's notAfter and a line naming it, for the log. */
static int describe(struct kerf_webhook_pair *p, char *line, size_t size)
{
	gnutls_x509_crt_t crt;
	gnutls_datum_t dn = { NULL, 0 };
	unsigned char serial[40];
	size_t nserial = sizeof(serial);
	char hex[2 * sizeof(serial) + 1] = "";
	time_t t;

	if (gnutls_x509_crt_init(&crt) < 0)
		return -KERF_ENOMEM;
	if (gnutls_x509_crt_import(crt, &p->pcert[0].cert,
				   GNUTLS_X509_FMT_DER) < 0) {
		gnutls_x509_crt_deinit(crt);
		return -KERF_EIO;
	}
	t = gnutls_x509_crt_get_expiration_time(crt);
	p->not_after_s = (int64_t)t;
	if (gnutls_x509_crt_get_serial(crt, serial, &nserial) == 0)
		for (size_t i = 0; i < nserial; i++)
			snprintf(hex + 2 * i, 3, "%02x", serial[i]);
	(void)gnutls_x509_crt_get_dn3(crt, &dn, 0);
	snprintf(line, size, "subject '%.200s' serial %s, not after %lld",
		 dn.data ? (const char *)dn.data : "", hex,
		 (long long)p->not_after_s);
	gnutls_free(dn.data);
	gnutls_x509_crt_deinit(crt);
	return 0;
}

static int pair_load(const char *cert_path, const char *key_path,
		     struct kerf_webhook_pair **out, char *line, size_t size,
		     struct kerf_err *err)
{
	gnutls_datum_t cert = { NULL, 0 }, key = { NULL, 0 };
	struct kerf_webhook_pair *p;
	char shown[256];
	bool match;
	int rc;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	rc = read_pem("certificate", cert_path, &cert, err);
	if (rc == 0)
		rc = read_pem("key", key_path, &key, err);
	if (rc < 0)
		goto out;
	p->nr_pcert = KERF_WEBHOOK_CHAIN_MAX;
	rc = gnutls_pcert_list_import_x509_raw(p->pcert, &p->nr_pcert, &cert,
					       GNUTLS_X509_FMT_PEM, 0);
	if (rc < 0 || p->nr_pcert == 0) {
		p->nr_pcert = 0;
		rc = kerf_err_set(err, -KERF_EIO,
				  "certificate '%s': %s",
				  kerf_escape(shown, sizeof(shown), cert_path),
				  rc < 0 ? gnutls_strerror(rc) : "no certificate in the file");
		goto out;
	}
	if (gnutls_privkey_init(&p->key) < 0) {
		rc = kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		goto out;
	}
	rc = gnutls_privkey_import_x509_raw(p->key, &key, GNUTLS_X509_FMT_PEM,
					    NULL, 0);
	if (rc < 0) {
		rc = kerf_err_set(err, -KERF_EIO, "key '%s': %s",
				  kerf_escape(shown, sizeof(shown), key_path),
				  gnutls_strerror(rc));
		goto out;
	}
	rc = key_matches(p->key, p->pcert[0].pubkey, &match);
	if (rc == 0 && !match)
		rc = -KERF_EIO;
	if (rc < 0) {
		rc = kerf_err_set(err, rc, "key '%s': not the key of the certificate",
				  kerf_escape(shown, sizeof(shown), key_path));
		goto out;
	}
	rc = describe(p, line, size);
	if (rc < 0)
		rc = kerf_err_set(err, rc, "certificate '%s': cannot read its fields",
				  kerf_escape(shown, sizeof(shown), cert_path));
out:
	if (key.data) {
		memset(key.data, 0, key.size);
		free(key.data);
	}
	free(cert.data);
	if (rc < 0) {
		pair_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int kerf_webhook_certs_init(struct kerf_webhook_certs *c,
			    const char *cert_path, const char *key_path,
			    kerf_webhook_certs_log_fn log, void *log_ctx,
			    struct kerf_err *err)
{
	char line[400];
	int rc;

	memset(c, 0, sizeof(*c));
	c->log = log;
	c->log_ctx = log_ctx;
	if (!cert_path || !key_path)
		return kerf_err_set(err, -KERF_EINVAL,
				    "a certificate file and a key file are required");
	c->cert_path = kerf_strdup(cert_path);
	c->key_path = kerf_strdup(key_path);
	if (!c->cert_path || !c->key_path) {
		free(c->cert_path);
		free(c->key_path);
		c->cert_path = c->key_path = NULL;
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	file_id(cert_path, &c->cert_id);
	file_id(key_path, &c->key_id);
	rc = pair_load(cert_path, key_path, &c->current, line, sizeof(line),
		       err);
	if (rc < 0) {
		free(c->cert_path);
		free(c->key_path);
		c->cert_path = c->key_path = NULL;
		return rc;
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->reload_mu, NULL);
	atomic_store(&c->not_after_s, c->current->not_after_s);
	logf_(c, "serving certificate loaded: %s", line);
	return 0;
}

void kerf_webhook_certs_release(struct kerf_webhook_certs *c)
{
	if (!c->cert_path)
		return;
	while (c->retired) {
		struct kerf_webhook_pair *p = c->retired;

		c->retired = p->next;
		pair_free(p);
	}
	pair_free(c->current);
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->reload_mu);
	free(c->cert_path);
	free(c->key_path);
	memset(c, 0, sizeof(*c));
}

/*
 * Free the retired pairs from the oldest while none pins them: a
 * connection accepted while pair k was current may have shaken hands
 * with any pair from k on, so pair k goes only after every older one.
 */
static void reap(struct kerf_webhook_certs *c)
{
	while (c->retired && !c->retired->pins) {
		struct kerf_webhook_pair *p = c->retired;

		c->retired = p->next;
		pair_free(p);
	}
}

int kerf_webhook_certs_check(struct kerf_webhook_certs *c)
{
	struct kerf_webhook_file_id cid, kid;
	struct kerf_webhook_pair *p, **tail;
	struct kerf_err err = { 0 };
	char line[400];
	int rc;

	pthread_mutex_lock(&c->reload_mu);
	file_id(c->cert_path, &cid);
	file_id(c->key_path, &kid);
	if (same_id(&cid, &c->cert_id) && same_id(&kid, &c->key_id)) {
		pthread_mutex_unlock(&c->reload_mu);
		return 0;
	}
	c->cert_id = cid;
	c->key_id = kid;
	rc = pair_load(c->cert_path, c->key_path, &p, line, sizeof(line),
		       &err);
	if (rc < 0) {
		atomic_fetch_add(&c->reloads_failed, 1);
		logf_(c, "serving certificate not reloaded, the old one still serves: %s",
		      err.msg);
		pthread_mutex_unlock(&c->reload_mu);
		return rc;
	}
	pthread_mutex_lock(&c->mu);
	for (tail = &c->retired; *tail; tail = &(*tail)->next)
		;
	*tail = c->current;
	c->current = p;
	reap(c);
	pthread_mutex_unlock(&c->mu);
	atomic_store(&c->not_after_s, p->not_after_s);
	atomic_fetch_add(&c->reloads_ok, 1);
	logf_(c, "serving certificate reloaded: %s", line);
	pthread_mutex_unlock(&c->reload_mu);
	return 1;
}

struct kerf_webhook_pair *kerf_webhook_certs_pin(struct kerf_webhook_certs *c)
{
	struct kerf_webhook_pair *p;

	pthread_mutex_lock(&c->mu);
	p = c->current;
	p->pins++;
	pthread_mutex_unlock(&c->mu);
	return p;
}

void kerf_webhook_certs_unpin(struct kerf_webhook_certs *c,
			      struct kerf_webhook_pair *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&c->mu);
	p->pins--;
	reap(c);
	pthread_mutex_unlock(&c->mu);
}

int kerf_webhook_certs_retrieve(gnutls_session_t session,
				const gnutls_datum_t *req_ca_rdn, int nreqs,
				const gnutls_pk_algorithm_t *pk_algos,
				int pk_algos_length, gnutls_pcert_st **pcert,
				unsigned int *pcert_length,
				gnutls_privkey_t *privkey)
{
	struct kerf_webhook_pair *p = gnutls_session_get_ptr(session);

	(void)req_ca_rdn;
	(void)nreqs;
	(void)pk_algos;
	(void)pk_algos_length;
	if (!p)
		return -1;
	*pcert = p->pcert;
	*pcert_length = p->nr_pcert;
	*privkey = p->key;
	return 0;
}

int kerf_webhook_certs_render(struct kerf_webhook_certs *c,
			      struct kerf_buf *out)
{
	return kerf_buf_addf(out,
		"# HELP kerf_webhook_cert_expiry_timestamp_seconds The serving certificate's notAfter, in seconds since the epoch.\n"
		"# TYPE kerf_webhook_cert_expiry_timestamp_seconds gauge\n"
		"kerf_webhook_cert_expiry_timestamp_seconds %lld\n"
		"# HELP kerf_webhook_cert_reloads_total Reloads of the certificate and key files, by result.\n"
		"# TYPE kerf_webhook_cert_reloads_total counter\n"
		"kerf_webhook_cert_reloads_total{result=\"success\"} %llu\n"
		"kerf_webhook_cert_reloads_total{result=\"failure\"} %llu\n",
		(long long)atomic_load(&c->not_after_s),
		(unsigned long long)atomic_load(&c->reloads_ok),
		(unsigned long long)atomic_load(&c->reloads_failed));
}
