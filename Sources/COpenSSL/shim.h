#ifndef PUSHBRIDGE_COPENSSL_SHIM_H
#define PUSHBRIDGE_COPENSSL_SHIM_H

// OpenSSL's TLS client, for the HTTP/2 connections of Sources/HTTP2/TLS/ (the only folder that
// imports it). Several of its calls are macros over SSL_ctrl / SSL_CTX_ctrl, which Swift cannot
// call: one typed function each.
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

static inline long copenssl_ctx_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline int copenssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long copenssl_ctx_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}
static inline uint64_t copenssl_op_ignore_unexpected_eof(void) { return SSL_OP_IGNORE_UNEXPECTED_EOF; }
static inline int copenssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

#endif
