// goclients: franz-go (kgo, kadm) and Sarama driven against samsa-server by
// tests/integration/test_go_clients.py.  One binary, one subcommand per
// scenario; each prints one JSON object on stdout (what the test checks)
// and exits non-zero with the error on stderr when a client call fails.
//
//	goclients SUBCOMMAND -brokers HOST:PORT [flags]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// Rec is one consumed or produced record as the test sees it.
type Rec struct {
	P int32             `json:"p"`
	O int64             `json:"o"`
	K string            `json:"k"`
	V string            `json:"v"`
	H map[string]string `json:"h,omitempty"`
}

var (
	brokers = flag.String("brokers", "", "bootstrap host:port")
	topic   = flag.String("topic", "", "topic")
	group   = flag.String("group", "", "group id")
	n       = flag.Int("n", 0, "records to produce / expect")
	parts   = flag.Int("partitions", 1, "partitions of the topic (records go round-robin over them)")
	codec   = flag.String("codec", "none", "none|gzip|snappy|lz4|zstd")
	acks    = flag.String("acks", "all", "all|leader")
	idem    = flag.Bool("idempotent", true, "idempotent producer (franz-go's default)")
	members = flag.Int("members", 2, "group members in this process")
	proto   = flag.String("protocol", "classic", "classic|consumer (KIP-848)")
	balance = flag.String("balancer", "range", "range|sticky|cooperative-sticky|roundrobin")
	iso     = flag.String("isolation", "uncommitted", "committed|uncommitted")
	idle    = flag.Duration("idle", 2*time.Second, "consume: stop after this long without records once -n is reached (or with -n 0)")
	txnID   = flag.String("txnid", "goclients-txn", "transactional.id")
	out     = flag.String("out", "", "output topic (eos)")
	create  = flag.Bool("create", true, "create -topic (and -out) with -partitions first, through kadm (an existing topic is fine)")
	regex   = flag.String("regex", "", "kgo-group: subscribe to this regex (kgo.ConsumeRegex) instead of -topic")
	static  = flag.Bool("static", false, "kgo-group: static members (group.instance.id goclients-<i>)")
	timeout = flag.Duration("timeout", 60*time.Second, "overall deadline")
)

func flagString(name, value, usage string) *string { return flag.String(name, value, usage) }

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "goclients: "+format+"\n", args...)
	os.Exit(1)
}

func check(err error, what string) {
	if err != nil {
		die("%s: %v", what, err)
	}
}

func emit(v any) {
	enc := json.NewEncoder(os.Stdout)
	check(enc.Encode(v), "encode output")
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
}

// key/value of the i-th produced record of a run.
func keyOf(i int) string { return fmt.Sprintf("k%05d", i) }
func valueOf(tag string, i int) string {
	return fmt.Sprintf("%s-%05d-%s", tag, i, strings.Repeat("x", i%50))
}

func sortRecs(rs []Rec) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].P != rs[j].P {
			return rs[i].P < rs[j].P
		}
		return rs[i].O < rs[j].O
	})
}

var commands = map[string]func(ctx context.Context){
	"kgo-produce":    kgoProduce,
	"kgo-consume":    kgoConsume,
	"kgo-group":      kgoGroup,
	"kgo-txn":        kgoTxn,
	"kgo-eos":        kgoEOS,
	"kadm":           kadmScenario,
	"kadm-extra":     kadmExtra,
	"sarama-produce": saramaProduce,
	"sarama-group":   saramaGroup,
	"sarama-admin":   saramaAdmin,
	"sarama-txn":     saramaTxn,
}

func main() {
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		names := make([]string, 0, len(commands))
		for k := range commands {
			names = append(names, k)
		}
		sort.Strings(names)
		die("usage: goclients {%s} -brokers HOST:PORT [flags]", strings.Join(names, "|"))
	}
	cmd := commands[os.Args[1]]
	check(flag.CommandLine.Parse(os.Args[2:]), "flags")
	if *brokers == "" {
		die("-brokers is required")
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cmd(ctx)
}
