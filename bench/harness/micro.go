package harness

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

func init() { benchMicro = microBench }

// microPkgs are the hot paths with micro benchmarks next to their code.
var microPkgs = []string{"./ingest/registry", "./ingest/differ", "./bench/diffbench", "./ingest/scan", "./processors/categories", "./processors/toolfinder", "./processors/trust", "./processors/publish", "./processors/scorer", "./processors/method"}

// microBench runs the micro benchmarks (go test -bench) of the hot paths.
func microBench(ctx context.Context, c Config, _, _ string) (Section, error) {
	sec := Section{ID: "micro", Title: "Micro benchmarks next to the code"}
	args := append([]string{"test", "-run", "^$", "-bench", ".", "-benchtime", "1s", "-benchmem", "-count", "1"}, microPkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var keep []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "pkg:") || strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "---") {
			keep = append(keep, l)
		}
	}
	sec.Body = fmt.Sprintf("`go %s`\n\n```\n%s\n```\n", strings.Join(args, " "), strings.Join(keep, "\n"))
	sec.Summary = []string{fmt.Sprintf("| micro benchmarks (%d packages) | see the section below | | | — |", len(microPkgs))}
	if err != nil {
		sec.Body += "\n**go test failed:** " + err.Error() + "\n"
	}
	return sec, nil
}
