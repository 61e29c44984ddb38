package harness

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/forum-mcp/forum/internal/testenv"
)

// TestMain lets this test binary serve as benchmark 5's child process, as
// the harness binary does (Main checks probeArmEnv first).
func TestMain(m *testing.M) {
	if arm := os.Getenv(probeArmEnv); arm != "" {
		if err := runProbeArm(context.Background(), arm); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestProbeBenchmark runs benchmark 5 small: both arms, in child
// processes, complete every handshake against real go-sdk endpoints, and
// the section reports them.
func TestProbeBenchmark(t *testing.T) {
	testenv.Long(t, "starts child processes and 2 × 30 handshakes")
	c := Config{Runs: 1, ProbeN: 30, ProbeC: 8, ProbeListeners: 3, ProbeTools: 2, ProbePerHost: 4}
	sec, err := benchProbe(context.Background(), c, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| forum | 1 | 30/30 |", "| sdk | 1 | 30/30 |", "**forum / sdk**", "Profile of the forum arm"} {
		if !strings.Contains(sec.Body, want) {
			t.Errorf("section lacks %q:\n%s", want, sec.Body)
		}
	}
	if len(sec.Summary) != 1 || !strings.HasPrefix(sec.Summary[0], "| 5. prober, 30 local go-sdk MCP endpoints") {
		t.Errorf("summary %q", sec.Summary)
	}
}
