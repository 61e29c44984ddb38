package harness

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	benchhist "github.com/forum-mcp/forum/bench/history"
	"github.com/forum-mcp/forum/bus"
)

// Benchmark 3's producer runs in a process of its own (this binary again,
// with producerFlag first), so the peak RSS the harness reads from its own
// /proc/self/status is the pipeline's (broker, stages, store), not the
// producer's reading of a history file of up to 30 GB. The child writes
// to stdout, as it goes, when it handed the first message of each
// event-time minute to the writer (the parent's lag marks), and at the end
// how many messages it produced.

// producerFlag, as the first argument of Main, makes it the producer.
const producerFlag = "-pipeline-producer"

// selfArgs is how to run this binary again with other arguments: the
// executable and the arguments before Main's own (none for `go run
// ./bench`; a subcommand name when Main is called from one).
var selfArgs []string

func setSelf(args []string) {
	exe, err := os.Executable()
	if err != nil || len(os.Args)-1 < len(args) || !slices.Equal(os.Args[len(os.Args)-len(args):], args) {
		selfArgs = nil
		return
	}
	selfArgs = append([]string{exe}, os.Args[1:len(os.Args)-len(args)]...)
}

// producerMain is the child: it produces messages [from, to) of the
// history file at path to brokers.
func producerMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("producer", flag.ContinueOnError)
	brokers := fs.String("brokers", "", "comma-separated brokers")
	path := fs.String("path", "", "history file")
	from := fs.Int("from", 0, "first message")
	to := fs.Int("to", 0, "end (exclusive)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	last := int64(-1)
	n, err := produce(ctx, strings.Split(*brokers, ","), *path, "", *from, *to, func(at time.Time) {
		if m := at.UnixMilli() / 60_000; m != last {
			last = m
			fmt.Fprintf(out, "m %d %d\n", m, time.Now().UnixNano())
			out.Flush() // the parent reads marks live
		}
	}, zap.NewNop())
	fmt.Fprintf(out, "done %d\n", n)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// producer is a running child producer.
type producer struct {
	cmd  *exec.Cmd
	n    atomic.Int64
	read chan error // the stdout reader's end
}

// startProducer starts the child producing messages [from, to) of path.
// mk (may be nil) gets its marks as the child reports them.
func startProducer(ctx context.Context, brokers []string, path string, from, to int, mk *marks) (*producer, error) {
	if selfArgs == nil {
		return nil, errors.New("cannot run this binary again for the producer (os.Executable, or Main's arguments are not the process's)")
	}
	args := append(append(append([]string{}, selfArgs[1:]...), producerFlag), "-brokers", strings.Join(brokers, ","),
		"-path", path, "-from", strconv.Itoa(from), "-to", strconv.Itoa(to))
	cmd := exec.CommandContext(ctx, selfArgs[0], args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the producer: %w", err)
	}
	p := &producer{cmd: cmd, read: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) == 3 && f[0] == "m":
				minute, _ := strconv.ParseInt(f[1], 10, 64)
				nano, _ := strconv.ParseInt(f[2], 10, 64)
				if mk != nil {
					mk.set(time.UnixMilli(minute*60_000), nano)
				}
			case len(f) == 2 && f[0] == "done":
				n, _ := strconv.ParseInt(f[1], 10, 64)
				p.n.Store(n)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		p.read <- sc.Err()
	}()
	return p, nil
}

// wait waits for the child and returns how many messages it produced.
func (p *producer) wait() (int, error) {
	rerr := <-p.read
	if err := p.cmd.Wait(); err != nil {
		return int(p.n.Load()), fmt.Errorf("producer: %w", err)
	}
	return int(p.n.Load()), rerr
}

// produceChild runs the producer in a child process and waits for it.
func produceChild(ctx context.Context, brokers []string, path string, from, to int, mk *marks) (int, error) {
	p, err := startProducer(ctx, brokers, path, from, to, mk)
	if err != nil {
		return 0, err
	}
	return p.wait()
}

// produce writes the history file's messages (topic names prefixed) through
// one bus writer and returns when every write is acknowledged. Only
// messages [from, to) of the file are produced; mark (may be nil) is called
// with each message's event time as it is handed to the writer.
func produce(ctx context.Context, brokers []string, path, prefix string, from, to int, mark func(at time.Time), log *zap.Logger) (int, error) {
	r, err := benchhist.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	w := bus.NewWriter(brokers, log)
	defer w.Close()
	n := 0
	chunk := make([]kafka.Message, 0, produceChunk)
	i := -1
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if err := w.WriteMessages(ctx, chunk...); err != nil {
			return bus.SummarizeWriteError(err)
		}
		n += len(chunk)
		chunk = make([]kafka.Message, 0, produceChunk)
		return nil
	}
	for {
		m, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, err
		}
		if i++; i < from {
			continue
		} else if i >= to {
			break
		}
		if mark != nil {
			mark(m.At)
		}
		chunk = append(chunk, kafka.Message{Topic: prefix + m.Topic, Key: m.Key, Value: m.Value})
		if len(chunk) == produceChunk {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	return n, flush()
}
