// The calibration for http2_requests_per_second and fcm_sends_per_second: what bare libcurl does
// on this machine, with no Swift in the process. N FCM-shaped POSTs over one TLS HTTP/2
// connection, S streams kept busy (a finished handle is re-added at once), the same options the
// HTTP/2 client sets per handle. Prints requests/s and the process's CPU time per request.
//
// With RATE, an open loop instead: RATE requests a second, a batch every 5 ms whatever the
// answers, over as many connections as they need (S streams each): what bare libcurl costs per
// request at partial load, when answers do not batch (prefix bare_curl_open_).
//
//   cc -O2 -o bare_curl_h2 bare_curl_h2.c -lcurl
//   ./bare_curl_h2 URL CA_FILE REQUESTS STREAMS [RATE]
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static size_t discard(char *p, size_t size, size_t n, void *u) { (void)p; (void)u; return size * n; }

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)r.ru_utime.tv_sec + (double)r.ru_utime.tv_usec / 1e6 + (double)r.ru_stime.tv_sec + (double)r.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s URL CA_FILE REQUESTS STREAMS [RATE]\n", argv[0]);
        return 2;
    }
    const char *url = argv[1], *ca = argv[2];
    long total = atol(argv[3]);
    int streams = atoi(argv[4]);
    double rate = argc == 6 ? atof(argv[5]) : 0;
    // Open loop: enough handles for 2 s of requests in flight.
    int handles = rate > 0 ? (int)(rate * 2) : streams;
    static const char body[] =
        "{\"message\":{\"token\":\"bench-token-1-abcdefghijklmnopqrstuvwxyz0123456789\","
        "\"android\":{\"collapse_key\":\"e1\",\"notification\":{\"title_loc_key\":\"welcome_title\",\"title_loc_args\":[\"User 1\"]}},"
        "\"apns\":{\"payload\":{\"aps\":{\"alert\":{\"title-loc-key\":\"welcome_title\",\"title-loc-args\":[\"User 1\"]}}}},"
        "\"data\":{\"sent_at_us\":\"1795454552540000\"}}}";

    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, rate > 0 ? 0L : 1L);
    curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, (long)streams);
    struct curl_slist *headers = NULL;
    headers = curl_slist_append(headers, "authorization: Bearer stub-token");
    headers = curl_slist_append(headers, "content-type: application/json; charset=UTF-8");
    CURL **easy = calloc((size_t)handles, sizeof *easy);
    for (int i = 0; i < handles; i++) {
        easy[i] = curl_easy_init();
        curl_easy_setopt(easy[i], CURLOPT_URL, url);
        curl_easy_setopt(easy[i], CURLOPT_CAINFO, ca);
        curl_easy_setopt(easy[i], CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
        curl_easy_setopt(easy[i], CURLOPT_PIPEWAIT, 1L);
        curl_easy_setopt(easy[i], CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy[i], CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(easy[i], CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy[i], CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(easy[i], CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }

    // One request first: the connection (TLS + ALPN) is not part of the figure.
    int running = 1, queued;
    CURLMsg *msg;
    curl_multi_add_handle(multi, easy[0]);
    while (running) {
        curl_multi_perform(multi, &running);
        if (running) curl_multi_poll(multi, NULL, 0, 100, NULL);
    }
    while ((msg = curl_multi_info_read(multi, &queued))) {
        if (msg->data.result != CURLE_OK) {
            fprintf(stderr, "warm-up request failed: %s\n", curl_easy_strerror(msg->data.result));
            return 1;
        }
        curl_multi_remove_handle(multi, msg->easy_handle);
    }

    // Finished handles go back on a stack. Flat out, each is re-added at once; in the open loop,
    // the requests due by the end of the current 5 ms are added.
    long started = 0, done = 0;
    CURL **idle = calloc((size_t)handles, sizeof *idle);
    int idle_count = 0;
    for (int i = handles - 1; i >= 0; i--) idle[idle_count++] = easy[i];
    double t0 = seconds(), cpu0 = cpu_seconds();
    while (done < total) {
        long due = total;
        if (rate > 0) {
            double tick_end = (double)((long)((seconds() - t0) / 0.005) + 1) * 0.005;
            due = (long)(tick_end * rate);
            if (due > total) due = total;
        }
        while (started < due && idle_count > 0) {
            curl_multi_add_handle(multi, idle[--idle_count]);
            started++;
        }
        curl_multi_perform(multi, &running);
        while ((msg = curl_multi_info_read(multi, &queued))) {
            if (msg->msg != CURLMSG_DONE) continue;
            if (msg->data.result != CURLE_OK) {
                fprintf(stderr, "request failed: %s\n", curl_easy_strerror(msg->data.result));
                return 1;
            }
            done++;
            curl_multi_remove_handle(multi, msg->easy_handle);
            idle[idle_count++] = msg->easy_handle;
        }
        int wait_ms = 100;
        if (rate > 0 && started < total) {
            double next = t0 + (double)((long)((seconds() - t0) / 0.005) + 1) * 0.005;
            wait_ms = (int)((next - seconds()) * 1000);
        }
        // Flat out, handles just freed go in at once (the loop comes back without waiting).
        if (rate > 0 || idle_count == 0 || started >= total) curl_multi_poll(multi, NULL, 0, wait_ms > 0 ? wait_ms : 0, NULL);
    }
    double elapsed = seconds() - t0, cpu = cpu_seconds() - cpu0;
    const char *prefix = rate > 0 ? "bare_curl_open_" : "bare_curl_";
    printf("%srequests_per_second: %.0f\n", prefix, (double)total / elapsed);
    printf("%scpu_us_per_request: %.1f\n", prefix, cpu / (double)total * 1e6);
    return 0;
}
