package testenv

import "testing"

func TestServiceReturnsTheValue(t *testing.T) {
	t.Setenv("FORUM_TESTENV_PROBE", "x")
	if got := Service(t, "FORUM_TESTENV_PROBE", "hint"); got != "x" {
		t.Fatalf("got %q", got)
	}
}

func TestUnsetServiceFailsUnderCI(t *testing.T) {
	t.Setenv("CI", "true")
	ft := &fakeT{TB: t}
	func() {
		defer func() { _ = recover() }()
		Service(ft, "FORUM_TESTENV_UNSET_FOR_SURE", "hint")
	}()
	if !ft.failed || ft.skipped {
		t.Fatalf("under CI an unset service must fail, not skip: failed=%v skipped=%v", ft.failed, ft.skipped)
	}
	t.Setenv("CI", "")
	ft = &fakeT{TB: t}
	func() {
		defer func() { _ = recover() }()
		Service(ft, "FORUM_TESTENV_UNSET_FOR_SURE", "hint")
	}()
	if ft.failed || !ft.skipped {
		t.Fatalf("locally an unset service must skip: failed=%v skipped=%v", ft.failed, ft.skipped)
	}
}

// fakeT records Fatalf/Skip instead of ending the real test.
type fakeT struct {
	testing.TB
	failed, skipped bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Fatalf(string, ...any) { f.failed = true; panic("fatal") }
func (f *fakeT) Skip(...any)           { f.skipped = true; panic("skip") }
