package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestOpsServedWhileWaitingForTheBroker: a role started before its broker
// waits for it, and meanwhile --ops-listen already answers: /readyz 503
// naming the bus, forum_dependency_up{dependency="bus"} 0. An interrupt
// ends the wait.
func TestOpsServedWhileWaitingForTheBroker(t *testing.T) {
	bin := forumBin(t)
	ops := freeAddr(t)
	nobody := freeAddr(t) // closed: no broker there
	p := start(t, bin, []string{"FORUM_KAFKA_BROKERS=" + nobody, "FORUM_CLICKHOUSE_DSN="},
		"process", "--data-dir", t.TempDir(), "--ops-listen", ops, "--log-level", "warn")
	defer p.stop()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + ops + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get("/readyz")
		_, metrics := get("/metrics")
		if code == http.StatusServiceUnavailable && strings.Contains(body, "bus") &&
			strings.Contains(metrics, `forum_dependency_up{dependency="bus"} 0`) {
			break
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("while waiting for the broker: /readyz %d %q, exited %v\n%s", code, body, p.exited(), p.out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d while waiting: the process is alive", code)
	}
	done := make(chan struct{})
	go func() { p.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(25 * time.Second):
		t.Fatal("an interrupt did not end the wait for the broker")
	}
}
