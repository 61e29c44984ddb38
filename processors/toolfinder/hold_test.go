package toolfinder

import (
	"reflect"
	"testing"
)

// TestSafetyHoldDisplayRules pins SPEC §3's safety hold in the display
// helpers: a held server is treated as flagged (off the leaderboard, one
// ×0.5 in search even when it also has a Toolfinder flag) and can never take
// the sponsored slot; its score is untouched.
func TestSafetyHoldDisplayRules(t *testing.T) {
	rows := []Ranked{
		{Name: "com.a/held", Score: 99, Held: true, Categories: []string{"databases"}},
		{Name: "com.a/one", Score: 90, Categories: []string{"databases"}},
		{Name: "com.a/two", Score: 80, Categories: []string{"databases"}},
		{Name: "com.b/both", Score: 95, Held: true, Flags: []string{FlagTestOrDemo}, Categories: []string{"databases"}},
		{Name: "com.c/x", Score: 70, Categories: []string{"databases"}},
	}
	orig := append([]Ranked(nil), rows...)
	var names []string
	for _, r := range Leaderboard(rows, "", 0) {
		names = append(names, r.Name)
	}
	// com.a/held would be first and would also push com.a/two out of the
	// namespace's two places.
	if want := []string{"com.a/one", "com.a/two", "com.c/x"}; !reflect.DeepEqual(names, want) {
		t.Errorf("leaderboard %v, want %v", names, want)
	}
	if !reflect.DeepEqual(rows, orig) {
		t.Error("Leaderboard modified its input (or a score)")
	}

	for _, tc := range []struct {
		name string
		r    Ranked
		want bool
	}{
		{"plain", Ranked{}, false},
		{"toolfinder flag", Ranked{Flags: []string{FlagPlaceholder}}, true},
		{"safety hold", Ranked{Held: true}, true},
		{"both", Ranked{Held: true, Flags: []string{FlagPlaceholder}}, true},
	} {
		if got := tc.r.DisplayFlagged(); got != tc.want {
			t.Errorf("%s: DisplayFlagged %v, want %v", tc.name, got, tc.want)
		}
	}
	// one flag state: held and flagged is ×0.5 once, not ×0.25
	both := Ranked{Held: true, Flags: []string{FlagPlaceholder}}
	if m := RankMultiplier(both.DisplayFlagged(), OutcomeOK); m != 0.5 {
		t.Errorf("held and flagged: multiplier %v, want 0.5", m)
	}
	if m := RankMultiplier(Ranked{Held: true}.DisplayFlagged(), OutcomeUnreachable); m != 0.425 {
		t.Errorf("held and unreachable: multiplier %v, want 0.425", m)
	}

	for _, tc := range []struct {
		name      string
		campaign  []string
		sponsored string // "" none
	}{
		{"held alone is never sponsored", []string{"com.a/held"}, ""},
		{"held and flagged", []string{"com.b/both"}, ""},
		{"the next eligible after a held one", []string{"com.a/held", "com.c/x"}, "com.c/x"},
		{"unheld first", []string{"com.a/one", "com.a/held"}, "com.a/one"},
	} {
		got := Sponsored(rows, tc.campaign)
		switch {
		case tc.sponsored == "" && len(got) != 0:
			t.Errorf("%s: sponsored %+v", tc.name, got)
		case tc.sponsored != "" && (len(got) != 1 || got[0].Name != tc.sponsored):
			t.Errorf("%s: sponsored %+v, want %s", tc.name, got, tc.sponsored)
		}
	}
}
