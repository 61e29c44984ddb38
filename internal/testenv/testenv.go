// Package testenv decides what a test does when something it needs from
// outside is missing: a service named by an environment variable
// (FORUM_TEST_CLICKHOUSE, FORUM_TEST_KAFKA, FORUM_TEST_E2E), the shared
// corpus beside the checkout, a loopback address. Locally the test skips
// with a hint; under CI=true it fails, so CI can never pass by skipping.
// It lives in internal/ because tests of every stage use it.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// CI reports whether the tests run in CI (CI=true).
func CI() bool { return os.Getenv("CI") == "true" }

// Unavailable skips t with the reason, or fails it under CI.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("CI=true, and this test cannot run: %s", msg)
	}
	t.Skip(msg)
}

// Service returns the value of the environment variable that names a
// service; unset, the test skips (fails under CI) with hint.
func Service(t testing.TB, env, hint string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		Unavailable(t, "%s is not set (%s)", env, hint)
	}
	return v
}

// Path returns path when it exists; missing, the test skips (fails under
// CI) with hint.
func Path(t testing.TB, path, hint string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Unavailable(t, "%s is missing (%s)", path, hint)
	}
	return path
}

// Long skips a slow test under -short, except in CI, which always runs it:
// -short is for a quick local loop, never a way for CI to pass.
func Long(t testing.TB, why string) {
	t.Helper()
	if testing.Short() && !CI() {
		t.Skip("-short: " + why)
	}
}
