// Package probe runs MCP handshake probes against the remotes of registry
// entries (SPEC §1.3) and turns each one into a [Check].
//
// In: a [Request] (server name, remote URL, declared transport, the headers
// the registry entry declares, observation time) — the value on the
// probe.requests topic. Out: a [Check] — the value on the health.checks topic
// and one row of health_checks. A probe never returns an error: every failure
// is an outcome (ok, auth_required, handshake_failed, unreachable,
// rate_limited, not_checked) with an [ErrorClass] and a bounded message, so
// the pipeline keeps one row per attempt. The [Scheduler] publishes the
// requests, the [Worker] probes them and publishes the checks.
//
// The handshake is Streamable HTTP (initialize → notifications/initialized →
// tools/list with paging) or legacy SSE (GET stream → endpoint event → POSTs,
// answers read from the stream). Each label gets the other transport when it
// plainly is not what the server speaks: an sse remote whose GET answers
// 404/405 is retried as Streamable HTTP, and a streamable-http remote whose
// POST initialize answers 400/404/405 is retried as legacy SSE (MCP's
// backwards-compatibility rule for clients); the second verdict replaces the
// first only when it is decisive (the endpoint event arrived, or the GET was
// refused for auth or load), and a check whose other transport answered
// initialize carries the transport_mismatch note.
//
// # An honest instrument
//
// A public census of every registry endpoint published a failure rate three
// times, each time inflated by its own prober. The rules that keep this one
// from doing the same (each pinned by a row of TestHonestInstrument, with the
// direction of error if misread):
//   - The body is read before the status is judged (up to the 1 MiB cap, a
//     protocol marker late in a verbose SSE stream included). A valid
//     JSON-RPC answer counts whatever the status: ok, status kept, note
//     off_spec_status. A 4xx whose JSON-RPC error or text says a credential
//     is missing or invalid ("Bearer token is required") is auth_required
//     (class auth_message); HTML error pages are not read for that.
//   - 429, or 503 with Retry-After, is rate_limited (refused for load, not
//     the server's fault; the scorer counts it neither way) with
//     retry_after_s. The host is then left alone until Retry-After has
//     passed (seconds or HTTP date, the date measured from the response's
//     Date header; one minute when a 429 gives none), capped at MaxBackoff
//     (the probe interval). A probe of a host in back-off is not delayed but
//     recorded at once as rate_limited, class backoff, without a request:
//     delaying it would hold the Worker's whole batch (and its offsets) for
//     up to an hour and stamp a stale slot time on a late probe, while a
//     rate_limited check costs the server nothing. The back-off is checked
//     again after the wait for a per-host slot, so probes queued behind the
//     refused one are not sent either. A refusal for load during tools/list
//     is rate_limited too (ok with no tools would score the tools 0).
//   - Politeness: at most PerHostLimit probes run against one host at once
//     (shared by all of a Worker's concurrent probes; a legacy SSE probe
//     holds its GET stream open beside its POSTs, so that is up to two
//     connections per probe), and the Scheduler spreads a host's n remotes
//     evenly, interval/n apart ([Offsets]).
//
// The Worker's [Metrics] (forum_probe_*) show the prober's own health:
// checks by outcome, class and top host, per batch and in total, and the
// share of rate_limited over the last 1000 checks — a spike of our own
// making shows there first.
//
// Why hand-written and not the go-sdk client: the scores need what the SDK
// hides — the raw HTTP status, the body of a refusal, the WWW-Authenticate
// challenge, Retry-After, response headers, the initialize latency on its
// own, and the exact JSON of each tool (for its hash) — and every connection
// must go through the SSRF-safe dialer with body and time caps. The go-sdk
// client is used only in the benchmark, as the yardstick, and its servers are
// what the tests probe. There (benchmark 5 of bench/RESULTS.md, `go run
// ./bench -only probe`: 2000 go-sdk endpoints, 2 cores, both clients in the
// same run) this prober ran 1.7–2.6× the SDK client's throughput at about
// half its median handshake time and 0.15× its allocated bytes (though
// ~1.3× its allocated objects).
//
// Safety: the [Prober]'s HTTP transport dials through a guard that resolves
// the host once, refuses the whole name if any address is loopback,
// link-local (incl. 169.254.169.254), private, CGNAT, multicast, unspecified,
// reserved or an IPv4-mapped/NAT64/6to4 form of one (unless allow-listed), and
// dials the checked IP — so DNS rebinding and redirects to internal addresses
// are refused on every connection. Bodies are capped (1 MiB, error class
// body_too_large), SSE streams are time-capped, URLs with unfilled
// {placeholders} are never requested, and a per-host semaphore bounds how
// many probes hit one host at once.
package probe
