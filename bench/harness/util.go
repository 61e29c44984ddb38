package harness

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
)

func sortStrings(s []string) { sort.Strings(s) }

// topFunctions summarizes a CPU profile with `go tool pprof -top` (the 15
// functions with the most flat time, then the 12 with the most cumulative).
func topFunctions(path string) (string, error) {
	var b strings.Builder
	for _, mode := range [][]string{{"-top", "-nodecount=15"}, {"-top", "-cum", "-nodecount=15"}} {
		out, err := exec.Command("go", append(append([]string{"tool", "pprof"}, mode...), path)...).Output()
		if err != nil {
			return "", fmt.Errorf("go tool pprof: %w", err)
		}
		lines := strings.Split(string(out), "\n")
		keep := []string{}
		started := false
		for _, l := range lines {
			if strings.Contains(l, "flat%") {
				started = true
			}
			if started || strings.HasPrefix(l, "Showing") || strings.HasPrefix(l, "Duration") {
				keep = append(keep, l)
			}
		}
		b.WriteString(strings.Join(keep, "\n"))
		b.WriteString("\n")
	}
	return b.String(), nil
}
