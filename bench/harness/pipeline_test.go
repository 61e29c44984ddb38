package harness

import "testing"

func TestParseGoMemLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"400MiB", 400 << 20}, {"1GiB", 1 << 30}, {"1024", 1024}, {"512B", 512}, {"3KiB", 3 << 10},
		{"", -1}, {"MiB", -1}, {"-1MiB", -1}, {"1.5GiB", -1}, {"400MB", -1},
	} {
		got, err := parseGoMemLimit(tc.in)
		if tc.want < 0 {
			if err == nil {
				t.Errorf("%q: got %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}
