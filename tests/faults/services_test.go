package faults

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// services are a Kafka broker and a ClickHouse server of the test's own,
// started through the deploy scripts CI uses (so the Kafka jars and the
// clickhouse-server package they install are reused), on free ports and
// data dirs under the test's temp dir.
type services struct {
	repo              string
	kafkaDir, chDir   string
	kafkaPort, chPort int
	kafkaEnv, chEnv   []string
}

func startServices(t *testing.T, repo string) *services {
	t.Helper()
	dir := t.TempDir()
	s := &services{repo: repo, kafkaDir: filepath.Join(dir, "kafka"), chDir: filepath.Join(dir, "clickhouse"),
		kafkaPort: freePortPair(t), chPort: freePort(t)}
	s.kafkaEnv = []string{"FORUM_KAFKA_DIR=" + s.kafkaDir, "FORUM_KAFKA_PORT=" + strconv.Itoa(s.kafkaPort), "FORUM_KAFKA_HEAP=384m"}
	s.chEnv = []string{"FORUM_CH_DIR=" + s.chDir, "FORUM_CH_PORT=" + strconv.Itoa(s.chPort), "FORUM_CH_HTTP_PORT=" + strconv.Itoa(freePort(t))}
	s.kafka(t, "start")
	t.Cleanup(func() { s.script(t, "kafka", s.kafkaEnv, "stop") })
	s.clickhouse(t, "start")
	t.Cleanup(func() { s.script(t, "clickhouse", s.chEnv, "stop") })
	return s
}

func (s *services) brokers() string { return "127.0.0.1:" + strconv.Itoa(s.kafkaPort) }
func (s *services) chAddr() string  { return "127.0.0.1:" + strconv.Itoa(s.chPort) }

func (s *services) kafka(t *testing.T, action string) { s.script(t, "kafka", s.kafkaEnv, action) }

func (s *services) clickhouse(t *testing.T, action string) {
	s.script(t, "clickhouse", s.chEnv, action)
}

// killKafka SIGKILLs the broker: no controlled shutdown, its partitions'
// leader is simply gone.
func (s *services) killKafka(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.kafkaDir, "kafka.pid"))
	if err != nil {
		t.Fatalf("broker pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("broker pid %q: %v", b, err)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *services) script(t *testing.T, name string, env []string, action string) {
	t.Helper()
	c := exec.Command("bash", filepath.Join(s.repo, "deploy", name+".sh"), action)
	c.Env = append(os.Environ(), env...)
	began := time.Now()
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("deploy/%s.sh %s: %v\n%s", name, action, err, out)
	}
	t.Logf("deploy/%s.sh %s: %s", name, action, time.Since(began).Round(100*time.Millisecond))
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// freePortPair returns a port p with p+1 free too (Kafka's controller
// listens on port+1).
func freePortPair(t *testing.T) int {
	t.Helper()
	for range 50 {
		p := freePort(t)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+1))
		if err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("no two adjacent free ports")
	return 0
}
