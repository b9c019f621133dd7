/*-------------------------------------------------------------------------
 *
 * sigv4_crypto.c
 *		The OpenSSL side of the signer: SHA-256, HMAC-SHA256, and the
 *		signature itself, from the signing key derived from the secret key
 *		through the date, the region, the service and "aws4_request".
 *
 * Plain C, no PostgreSQL (see sigv4.c).  Every OpenSSL call is checked and
 * every intermediate key is wiped: nothing derived from the secret key
 * outlives compute_signature().
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "sigv4.h"
#include "sigv4_internal.h"

/* ----------------------------------------------------------------- crypto */

static const char hexdigits[] = "0123456789abcdef";

static void
to_hex(const unsigned char *in, size_t n, char *out)
{
	size_t		i;

	for (i = 0; i < n; i++)
	{
		out[2 * i] = hexdigits[in[i] >> 4];
		out[2 * i + 1] = hexdigits[in[i] & 0x0F];
	}
	out[2 * n] = '\0';
}

static int
sha256(const unsigned char *data, size_t len, unsigned char *out)
{
	const EVP_MD *md = EVP_sha256();
	unsigned int outlen = 0;
	static const unsigned char empty[1] = {0};

	if (md == NULL)
		return 0;
	if (EVP_Digest(data ? data : empty, len, out, &outlen, md, NULL) != 1)
		return 0;
	return outlen == SHA256_LEN;
}

int
fs_sigv4_sha256_hex(const unsigned char *data, size_t len, char *out)
{
	unsigned char md[SHA256_LEN];

	if (!sha256(data, len, md))
		return 0;
	to_hex(md, SHA256_LEN, out);
	return 1;
}

static int
hmac_sha256(const unsigned char *key, size_t key_len,
			const char *msg, size_t msg_len, unsigned char *out)
{
	const EVP_MD *md = EVP_sha256();
	unsigned int outlen = 0;

	if (md == NULL || key_len > 0x7FFFFFFF)
		return 0;
	if (HMAC(md, key, (int) key_len, (const unsigned char *) msg, msg_len,
			 out, &outlen) == NULL)
		return 0;
	return outlen == SHA256_LEN;
}

int
fs_sigv4_hmac_sha256_hex(const unsigned char *key, size_t key_len,
						 const char *msg, size_t msg_len, char *out)
{
	unsigned char mac[SHA256_LEN];

	if (!hmac_sha256(key, key_len, msg, msg_len, mac))
		return 0;
	to_hex(mac, SHA256_LEN, out);
	return 1;
}

/*
 * signature = hex(HMAC(kSigning, string_to_sign)), where kSigning derives
 * from "AWS4" + secret through the date, the region, the service and
 * "aws4_request".  Every intermediate key is wiped.
 */
int
compute_signature(const char *secret, const char *date8, const char *region,
				  const char *service, const char *sts, char *out_hex)
{
	Buf			k0 = {0};
	unsigned char k1[SHA256_LEN],
				k2[SHA256_LEN],
				k3[SHA256_LEN],
				k4[SHA256_LEN],
				sig[SHA256_LEN];
	int			ok;

	buf_adds(&k0, "AWS4");
	buf_adds(&k0, secret);
	ok = !k0.failed &&
		hmac_sha256((unsigned char *) k0.data, k0.len, date8, 8, k1) &&
		hmac_sha256(k1, SHA256_LEN, region, strlen(region), k2) &&
		hmac_sha256(k2, SHA256_LEN, service, strlen(service), k3) &&
		hmac_sha256(k3, SHA256_LEN, "aws4_request", 12, k4) &&
		hmac_sha256(k4, SHA256_LEN, sts, strlen(sts), sig);
	if (ok)
		to_hex(sig, SHA256_LEN, out_hex);
	buf_wipe(&k0);
	OPENSSL_cleanse(k1, sizeof(k1));
	OPENSSL_cleanse(k2, sizeof(k2));
	OPENSSL_cleanse(k3, sizeof(k3));
	OPENSSL_cleanse(k4, sizeof(k4));
	OPENSSL_cleanse(sig, sizeof(sig));
	return ok;
}
