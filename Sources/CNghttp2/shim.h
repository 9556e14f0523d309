#ifndef PUSHBRIDGE_CNGHTTP2_SHIM_H
#define PUSHBRIDGE_CNGHTTP2_SHIM_H

// nghttp2's HTTP/2 framing and HPACK, without I/O of its own: the session takes the bytes read
// and gives the bytes to write (nghttp2_session_mem_recv / _mem_send). Used by Sources/HTTP2/Nghttp2/ only.
#include <nghttp2/nghttp2.h>

#endif
