// Package probe runs MCP handshake probes against the remotes of registry
// entries (SPEC §1.3) and turns each one into a [Check].
//
// In: a [Request] (server name, remote URL, declared transport, the headers
// the registry entry declares, observation time) — the value on the
// probe.requests topic. Out: a [Check] — the value on the health.checks topic
// and one row of health_checks. A probe never returns an error: every failure
// is an outcome (ok, auth_required, handshake_failed, unreachable,
// not_checked) with an [ErrorClass] and a bounded message, so the pipeline
// keeps one row per attempt.
//
// The handshake is Streamable HTTP (initialize → notifications/initialized →
// tools/list with paging) or legacy SSE (GET stream → endpoint event → POSTs,
// answers read from the stream); a remote labelled sse that answers 404/405 to
// the GET is retried as Streamable HTTP.
//
// Why hand-written and not the go-sdk client: the scores need what the SDK
// hides — the raw HTTP status, the WWW-Authenticate challenge, response
// headers, the initialize latency on its own, and the exact JSON of each tool
// (for its hash) — and every connection must go through the SSRF-safe dialer
// with body and time caps. The go-sdk client is used only in bench/probe, as
// the yardstick, and its servers are what the tests probe.
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
