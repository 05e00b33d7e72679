package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func kgoCodec(name string) kgo.CompressionCodec {
	switch name {
	case "none":
		return kgo.NoCompression()
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	die("unknown codec %q", name)
	return kgo.NoCompression()
}

func kgoClient(opts ...kgo.Opt) *kgo.Client {
	base := []kgo.Opt{kgo.SeedBrokers(*brokers), kgo.ClientID("goclients-franz")}
	cl, err := kgo.NewClient(append(base, opts...)...)
	check(err, "kgo.NewClient")
	return cl
}

// producerOpts: the codec, acks and idempotence of the flags; records are
// placed by their Partition field (the test spreads them round-robin).
func producerOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.ProducerBatchCompression(kgoCodec(*codec)),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(*topic),
		kgo.ProducerLinger(5 * time.Millisecond),
	}
	switch *acks {
	case "all":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "leader":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	default:
		die("unknown acks %q", *acks)
	}
	if !*idem || *acks != "all" {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	return opts
}

func produceN(ctx context.Context, cl *kgo.Client, tag string, from, count int) []Rec {
	recs := make([]*kgo.Record, 0, count)
	for i := from; i < from+count; i++ {
		recs = append(recs, &kgo.Record{
			Topic:     *topic,
			Partition: int32(i % *parts),
			Key:       []byte(keyOf(i)),
			Value:     []byte(valueOf(tag, i)),
			Headers:   []kgo.RecordHeader{{Key: "i", Value: []byte(fmt.Sprint(i))}, {Key: "codec", Value: []byte(*codec)}},
		})
	}
	res := cl.ProduceSync(ctx, recs...)
	check(res.FirstErr(), "ProduceSync")
	out := make([]Rec, 0, len(res))
	for _, r := range res {
		out = append(out, Rec{P: r.Record.Partition, O: r.Record.Offset, K: string(r.Record.Key), V: string(r.Record.Value)})
	}
	return out
}

func kgoRec(r *kgo.Record) Rec {
	h := map[string]string{}
	for _, x := range r.Headers {
		h[x.Key] = string(x.Value)
	}
	return Rec{P: r.Partition, O: r.Offset, K: string(r.Key), V: string(r.Value), H: h}
}

// kgo-produce: -n records with -codec/-acks/-idempotent, synchronously;
// prints where each went.
func kgoProduce(ctx context.Context) {
	ensureTopics(ctx, *topic)
	cl := kgoClient(producerOpts()...)
	defer cl.Close()
	emit(map[string]any{"records": produceN(ctx, cl, *codec, 0, *n)})
}

// kgo-consume: a direct consumer of every partition from the start, until
// -n records came and then -idle passed without more (or the deadline).
func kgoConsume(ctx context.Context) {
	opts := []kgo.Opt{
		kgo.ConsumeTopics(*topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}
	if *iso == "committed" {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl := kgoClient(opts...)
	defer cl.Close()
	var got []Rec
	last := time.Now()
	for {
		if len(got) >= *n && time.Since(last) > *idle {
			break
		}
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			die("consume: deadline with %d of %d records", len(got), *n)
		}
		fs.EachError(func(t string, p int32, err error) {
			if err != context.DeadlineExceeded {
				die("fetch %s/%d: %v", t, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, kgoRec(r))
			last = time.Now()
		})
	}
	emit(map[string]any{"records": got})
}

func balancerOf(name string) kgo.GroupBalancer {
	switch name {
	case "range":
		return kgo.RangeBalancer()
	case "sticky":
		return kgo.StickyBalancer()
	case "cooperative-sticky":
		return kgo.CooperativeStickyBalancer()
	case "roundrobin":
		return kgo.RoundRobinBalancer()
	}
	die("unknown balancer %q", name)
	return nil
}

type member struct {
	mu       sync.Mutex
	assigned map[int32]bool
	recs     []Rec
	cl       *kgo.Client
}

func (m *member) owned() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ps []int32
	for p := range m.assigned {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// kgo-group: -members consumers of -group in this process (classic
// protocol with -balancer, or KIP-848 with -protocol consumer, where the
// broker assigns with the balancer's name as its assignor). Once every
// member owns partitions and together they own all -partitions, -n records
// are produced; members commit after each poll (rebalances are held off
// between poll and commit), and the output shows who owned what and what
// each member read, and what the group committed.
func kgoGroup(ctx context.Context) {
	ensureTopics(ctx, *topic)
	ms := make([]*member, *members)
	for i := range ms {
		m := &member{assigned: map[int32]bool{}}
		opts := []kgo.Opt{
			kgo.ConsumerGroup(*group),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.Balancers(balancerOf(*balance)),
			kgo.DisableAutoCommit(),
			kgo.BlockRebalanceOnPoll(),
			kgo.SessionTimeout(10 * time.Second),
			kgo.HeartbeatInterval(500 * time.Millisecond),
			kgo.ClientID(fmt.Sprintf("goclients-member-%d", i)),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
				m.mu.Lock()
				for _, p := range a[*topic] {
					m.assigned[p] = true
				}
				m.mu.Unlock()
			}),
			kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, a map[string][]int32) {
				m.mu.Lock()
				for _, p := range a[*topic] {
					delete(m.assigned, p)
				}
				m.mu.Unlock()
			}),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
				m.mu.Lock()
				for _, p := range a[*topic] {
					delete(m.assigned, p)
				}
				m.mu.Unlock()
			}),
		}
		if *regex != "" {
			opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(*regex))
		} else {
			opts = append(opts, kgo.ConsumeTopics(*topic))
		}
		if *static {
			opts = append(opts, kgo.InstanceID(fmt.Sprintf("goclients-%d", i)))
		}
		if *proto == "consumer" {
			opts = append(opts, kgo.ServerSideBalancer())
		} else if *proto != "classic" {
			die("unknown protocol %q", *proto)
		}
		m.cl = kgoClient(opts...)
		ms[i] = m
	}
	var seen sync.Map
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, m := range ms {
		wg.Add(1)
		go func(m *member) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				fs := m.cl.PollFetches(pctx)
				cancel()
				fs.EachError(func(t string, p int32, err error) {
					if err != context.DeadlineExceeded && err != context.Canceled {
						logf("fetch %s/%d: %v", t, p, err)
					}
				})
				fs.EachRecord(func(r *kgo.Record) {
					m.mu.Lock()
					m.recs = append(m.recs, kgoRec(r))
					m.mu.Unlock()
					seen.Store(fmt.Sprintf("%d/%d", r.Partition, r.Offset), true)
				})
				if err := m.cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
					logf("commit: %v", err)
				}
				m.cl.AllowRebalance()
			}
		}(m)
	}
	// Wait for a settled split.
	stable := func() bool {
		all := map[int32]int{}
		for _, m := range ms {
			o := m.owned()
			if len(o) == 0 && *parts >= len(ms) {
				return false
			}
			for _, p := range o {
				all[p]++
			}
		}
		if len(all) != *parts {
			return false
		}
		for _, c := range all {
			if c != 1 {
				return false
			}
		}
		return true
	}
	for !stable() {
		if ctx.Err() != nil {
			die("group never settled: %v", owners(ms))
		}
		time.Sleep(50 * time.Millisecond)
	}
	before := owners(ms)
	logf("settled: %v", before)
	prod := kgoClient(producerOpts()...)
	produced := produceN(ctx, prod, "group", 0, *n)
	prod.Close()
	count := func() int {
		c := 0
		seen.Range(func(_, _ any) bool { c++; return true })
		return c
	}
	for count() < *n {
		if ctx.Err() != nil {
			die("group read %d of %d records", count(), *n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a last poll's commit
	close(stop)
	wg.Wait()
	after := owners(ms)
	for _, m := range ms {
		check(m.cl.CommitUncommittedOffsets(ctx), "final commit")
	}

	adm := kadm.NewClient(kgoClient())
	defer adm.Close()
	committed := map[string]int64{}
	offs, err := adm.FetchOffsets(ctx, *group)
	check(err, "FetchOffsets")
	check(offs.Error(), "FetchOffsets (partition error)")
	for p := 0; p < *parts; p++ {
		if o, ok := offs.Lookup(*topic, int32(p)); ok {
			committed[fmt.Sprint(p)] = o.At
		}
	}
	desc := map[string]any{}
	if *proto == "consumer" {
		dg, err := adm.DescribeConsumerGroups(ctx, *group)
		check(err, "DescribeConsumerGroups")
		g := dg[*group]
		check(g.Err, "DescribeConsumerGroups (group error)")
		desc["state"], desc["members"], desc["assignor"] = g.State, len(g.Members), g.AssignorName
	} else {
		dg, err := adm.DescribeGroups(ctx, *group)
		check(err, "DescribeGroups")
		g := dg[*group]
		check(g.Err, "DescribeGroups (group error)")
		desc["state"], desc["members"], desc["protocol"], desc["protocol_type"] = g.State, len(g.Members), g.Protocol, g.ProtocolType
	}
	lg, err := adm.ListGroups(ctx)
	check(err, "ListGroups")
	listed := map[string]any{}
	if l, ok := lg[*group]; ok {
		listed = map[string]any{"state": l.State, "type": l.GroupType, "protocol_type": l.ProtocolType}
	}

	var outMembers []map[string]any
	for _, m := range ms {
		m.cl.Close()
		outMembers = append(outMembers, map[string]any{"records": m.recs})
	}
	emit(map[string]any{
		"members": outMembers, "owners_before": before, "owners_after": after,
		"produced": produced, "committed": committed, "described": desc, "listed": listed,
	})
}

func owners(ms []*member) [][]int32 {
	var o [][]int32
	for _, m := range ms {
		o = append(o, m.owned())
	}
	return o
}

// kgo-txn: three transactions of -n records each with one transactional
// producer: "commit1" committed, "abort" aborted, "commit2" committed.
func kgoTxn(ctx context.Context) {
	ensureTopics(ctx, *topic)
	opts := append(producerOpts(), kgo.TransactionalID(*txnID), kgo.TransactionTimeout(20*time.Second))
	cl := kgoClient(opts...)
	defer cl.Close()
	out := map[string]any{}
	base := 0
	for _, step := range []struct {
		tag    string
		commit kgo.TransactionEndTry
	}{{"commit1", kgo.TryCommit}, {"abort", kgo.TryAbort}, {"commit2", kgo.TryCommit}} {
		check(cl.BeginTransaction(), "BeginTransaction")
		recs := produceN(ctx, cl, step.tag, base, *n)
		base += *n
		check(cl.EndTransaction(ctx, step.commit), "EndTransaction "+step.tag)
		out[step.tag] = recs
	}
	emit(out)
}

// kgo-eos: consume-transform-produce with a GroupTransactSession: reads
// -topic as -group, writes each value prefixed with "eos:" to
// -out in transactions that also commit the group's offsets, until -n
// records were copied.
func kgoEOS(ctx context.Context) {
	ensureTopics(ctx, *out)
	s, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(*brokers),
		kgo.ClientID("goclients-eos"),
		kgo.TransactionalID(*txnID),
		kgo.TransactionTimeout(20*time.Second),
		kgo.ConsumerGroup(*group),
		kgo.ConsumeTopics(*topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.SessionTimeout(10*time.Second),
	)
	check(err, "NewGroupTransactSession")
	defer s.Close()
	copied, txns := 0, 0
	for copied < *n {
		if ctx.Err() != nil {
			die("eos: deadline with %d of %d copied", copied, *n)
		}
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		fs := s.PollFetches(pctx)
		cancel()
		fs.EachError(func(t string, p int32, err error) {
			if err != context.DeadlineExceeded {
				die("eos fetch %s/%d: %v", t, p, err)
			}
		})
		if fs.NumRecords() == 0 {
			continue
		}
		check(s.Begin(), "Begin")
		var recs []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			recs = append(recs, &kgo.Record{Topic: *out, Partition: r.Partition, Key: r.Key, Value: append([]byte("eos:"), r.Value...)})
		})
		var firstErr error
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, r := range recs {
			wg.Add(1)
			s.Produce(ctx, r, func(_ *kgo.Record, err error) {
				defer wg.Done()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		check(firstErr, "eos produce")
		committed, err := s.End(ctx, kgo.TryCommit)
		check(err, "End")
		if committed {
			copied += len(recs)
			txns++
		} else {
			logf("eos: transaction aborted (rebalance), retrying")
		}
	}
	adm := kadm.NewClient(kgoClient())
	defer adm.Close()
	offs, err := adm.FetchOffsets(ctx, *group)
	check(err, "FetchOffsets")
	committed := map[string]int64{}
	for p := 0; p < *parts; p++ {
		if o, ok := offs.Lookup(*topic, int32(p)); ok {
			committed[fmt.Sprint(p)] = o.At
		}
	}
	emit(map[string]any{"copied": copied, "transactions": txns, "committed": committed})
}
