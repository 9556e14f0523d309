#ifndef PUSHBRIDGE_CRDKAFKA_SHIM_H
#define PUSHBRIDGE_CRDKAFKA_SHIM_H

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/// rd_kafka_produceva with the argument vector built here, because Swift cannot
/// build the rd_kafka_vu_t union conveniently. On success librdkafka owns
/// `headers`; on failure the caller still owns it. The value is copied
/// (RD_KAFKA_MSG_F_COPY), so the caller's buffers may be released on return.
/// Returns NULL on success or an error the caller must rd_kafka_error_destroy().
static inline rd_kafka_error_t *crdkafka_produce(rd_kafka_t *rk,
                                                 const char *topic,
                                                 int32_t partition,
                                                 const void *key, size_t key_len,
                                                 const void *value, size_t value_len,
                                                 rd_kafka_headers_t *headers,
                                                 int64_t timestamp,
                                                 void *msg_opaque) {
    rd_kafka_vu_t vus[8];
    size_t n = 0;
    vus[n].vtype = RD_KAFKA_VTYPE_TOPIC;     vus[n++].u.cstr = topic;
    vus[n].vtype = RD_KAFKA_VTYPE_PARTITION; vus[n++].u.i32 = partition;
    vus[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;  vus[n++].u.i = RD_KAFKA_MSG_F_COPY;
    vus[n].vtype = RD_KAFKA_VTYPE_VALUE;
    vus[n].u.mem.ptr = (void *)value;        vus[n++].u.mem.size = value_len;
    if (key != NULL) {
        vus[n].vtype = RD_KAFKA_VTYPE_KEY;
        vus[n].u.mem.ptr = (void *)key;      vus[n++].u.mem.size = key_len;
    }
    if (headers != NULL) {
        vus[n].vtype = RD_KAFKA_VTYPE_HEADERS; vus[n++].u.headers = headers;
    }
    if (timestamp != 0) { /* 0: librdkafka stamps the record with the time of producing */
        vus[n].vtype = RD_KAFKA_VTYPE_TIMESTAMP; vus[n++].u.i64 = timestamp;
    }
    vus[n].vtype = RD_KAFKA_VTYPE_OPAQUE;    vus[n++].u.ptr = msg_opaque;
    return rd_kafka_produceva(rk, vus, n);
}

/// RD_KAFKA_PARTITION_UA is a macro Swift cannot import.
static inline int32_t crdkafka_partition_unassigned(void) { return RD_KAFKA_PARTITION_UA; }
/// RD_KAFKA_OFFSET_* are macros with casts Swift cannot import.
static inline int64_t crdkafka_offset_beginning(void) { return RD_KAFKA_OFFSET_BEGINNING; }
static inline int64_t crdkafka_offset_end(void) { return RD_KAFKA_OFFSET_END; }
static inline int64_t crdkafka_offset_stored(void) { return RD_KAFKA_OFFSET_STORED; }
static inline int64_t crdkafka_offset_invalid(void) { return RD_KAFKA_OFFSET_INVALID; }

#endif
