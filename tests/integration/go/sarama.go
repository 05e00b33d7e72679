package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

var kafkaVersion = flagString("kafka-version", "2.1.0", "sarama: the Kafka version it assumes (request versions follow it)")

func saramaConfig() *sarama.Config {
	cfg := sarama.NewConfig()
	v, err := sarama.ParseKafkaVersion(*kafkaVersion)
	check(err, "kafka version")
	cfg.Version = v
	cfg.ClientID = "goclients-sarama"
	cfg.Metadata.AllowAutoTopicCreation = false
	return cfg
}

func saramaCodec(name string) sarama.CompressionCodec {
	switch name {
	case "none":
		return sarama.CompressionNone
	case "gzip":
		return sarama.CompressionGZIP
	case "snappy":
		return sarama.CompressionSnappy
	case "lz4":
		return sarama.CompressionLZ4
	case "zstd":
		return sarama.CompressionZSTD
	}
	die("unknown codec %q", name)
	return sarama.CompressionNone
}

func saramaEnsureTopic(admin sarama.ClusterAdmin, t string, partitions int) {
	err := admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: int32(partitions), ReplicationFactor: 1}, false)
	if err != nil && !errors.Is(err, sarama.ErrTopicAlreadyExists) {
		die("CreateTopic %s: %v", t, err)
	}
}

func saramaMsg(tag string, i int) *sarama.ProducerMessage {
	return &sarama.ProducerMessage{
		Topic:     *topic,
		Partition: int32(i % *parts),
		Key:       sarama.StringEncoder(keyOf(i)),
		Value:     sarama.StringEncoder(valueOf(tag, i)),
		Headers:   []sarama.RecordHeader{{Key: []byte("i"), Value: []byte(fmt.Sprint(i))}},
		Metadata:  i,
	}
}

// sarama-produce: -n records through a SyncProducer ("sync-" values), then
// -n more through an AsyncProducer ("async-"), with -codec and -acks
// (idempotent when -idempotent and -acks all); prints where each went.
func saramaProduce(ctx context.Context) {
	cfg := saramaConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.Return.Errors = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Compression = saramaCodec(*codec)
	if *acks == "all" {
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		if *idem {
			cfg.Producer.Idempotent = true
			cfg.Net.MaxOpenRequests = 1
		}
	} else {
		cfg.Producer.RequiredAcks = sarama.WaitForLocal
	}
	if *create {
		admin, err := sarama.NewClusterAdmin([]string{*brokers}, saramaConfig())
		check(err, "NewClusterAdmin")
		saramaEnsureTopic(admin, *topic, *parts)
		admin.Close()
	}

	sp, err := sarama.NewSyncProducer([]string{*brokers}, cfg)
	check(err, "NewSyncProducer")
	var syncRecs []Rec
	for i := 0; i < *n; i++ {
		m := saramaMsg("sync", i)
		p, o, err := sp.SendMessage(m)
		check(err, "SendMessage")
		syncRecs = append(syncRecs, Rec{P: p, O: o, K: keyOf(i), V: valueOf("sync", i)})
	}
	check(sp.Close(), "SyncProducer.Close")

	ap, err := sarama.NewAsyncProducer([]string{*brokers}, cfg)
	check(err, "NewAsyncProducer")
	asyncRecs := make([]Rec, *n)
	var wg sync.WaitGroup
	wg.Add(1)
	var errs []error
	go func() {
		defer wg.Done()
		for got := 0; got < *n; got++ {
			select {
			case m := <-ap.Successes():
				i := m.Metadata.(int) - *n
				asyncRecs[i] = Rec{P: m.Partition, O: m.Offset, K: keyOf(i + *n), V: valueOf("async", i+*n)}
			case e := <-ap.Errors():
				errs = append(errs, e.Err)
			case <-ctx.Done():
				errs = append(errs, ctx.Err())
				return
			}
		}
	}()
	for i := *n; i < 2**n; i++ {
		ap.Input() <- saramaMsg("async", i)
	}
	wg.Wait()
	check(ap.Close(), "AsyncProducer.Close")
	if len(errs) > 0 {
		die("async produce: %d errors, first %v", len(errs), errs[0])
	}
	emit(map[string]any{"sync": syncRecs, "async": asyncRecs})
}

type saramaMember struct {
	mu     sync.Mutex
	claims map[int32]bool
	recs   []Rec
	seen   *sync.Map
}

func (m *saramaMember) Setup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims = map[int32]bool{}
	for _, p := range s.Claims()[*topic] {
		m.claims[p] = true
	}
	return nil
}

func (m *saramaMember) Cleanup(s sarama.ConsumerGroupSession) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.claims = map[int32]bool{}
	return nil
}

func (m *saramaMember) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for msg := range c.Messages() {
		h := map[string]string{}
		for _, x := range msg.Headers {
			h[string(x.Key)] = string(x.Value)
		}
		m.mu.Lock()
		m.recs = append(m.recs, Rec{P: msg.Partition, O: msg.Offset, K: string(msg.Key), V: string(msg.Value), H: h})
		m.mu.Unlock()
		s.MarkMessage(msg, "")
		s.Commit()
		m.seen.Store(fmt.Sprintf("%d/%d", msg.Partition, msg.Offset), true)
	}
	return nil
}

func (m *saramaMember) owned() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ps []int32
	for p := range m.claims {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// sarama-group: -members ConsumerGroup members with the -balancer
// (range|sticky|roundrobin) strategy; once they split -partitions, -n
// records are produced (SyncProducer) and read; offsets are committed per
// record; prints owners, what each read and the group's committed offsets.
func saramaGroup(ctx context.Context) {
	cfg := saramaConfig()
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Session.Timeout = 10 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	switch *balance {
	case "range":
		cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()}
	case "sticky":
		cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategySticky()}
	case "roundrobin":
		cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRoundRobin()}
	case "cooperative-sticky":
		cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyCooperativeSticky()}
	default:
		die("unknown sarama balancer %q", *balance)
	}
	admin, err := sarama.NewClusterAdmin([]string{*brokers}, saramaConfig())
	check(err, "NewClusterAdmin")
	defer admin.Close()
	saramaEnsureTopic(admin, *topic, *parts)

	var seen sync.Map
	gctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	ms := make([]*saramaMember, *members)
	groups := make([]sarama.ConsumerGroup, *members)
	for i := range ms {
		ms[i] = &saramaMember{claims: map[int32]bool{}, seen: &seen}
		c := *cfg
		c.ClientID = fmt.Sprintf("goclients-sarama-%d", i)
		g, err := sarama.NewConsumerGroup([]string{*brokers}, *group, &c)
		check(err, "NewConsumerGroup")
		groups[i] = g
		wg.Add(2)
		go func(g sarama.ConsumerGroup) {
			defer wg.Done()
			for e := range g.Errors() {
				logf("sarama group error: %v", e)
			}
		}(g)
		go func(g sarama.ConsumerGroup, m *saramaMember) {
			defer wg.Done()
			for gctx.Err() == nil {
				if err := g.Consume(gctx, []string{*topic}, m); err != nil && gctx.Err() == nil {
					logf("Consume: %v", err)
					time.Sleep(100 * time.Millisecond)
				}
			}
		}(g, ms[i])
	}
	owners := func() [][]int32 {
		var o [][]int32
		for _, m := range ms {
			o = append(o, m.owned())
		}
		return o
	}
	for {
		all := map[int32]int{}
		ok := true
		for _, m := range ms {
			o := m.owned()
			if len(o) == 0 {
				ok = false
			}
			for _, p := range o {
				all[p]++
			}
		}
		if ok && len(all) == *parts {
			break
		}
		if ctx.Err() != nil {
			die("sarama group never settled: %v", owners())
		}
		time.Sleep(50 * time.Millisecond)
	}
	before := owners()
	logf("settled: %v", before)

	pc := saramaConfig()
	pc.Producer.Return.Successes = true
	pc.Producer.Partitioner = sarama.NewManualPartitioner
	pc.Producer.RequiredAcks = sarama.WaitForAll
	sp, err := sarama.NewSyncProducer([]string{*brokers}, pc)
	check(err, "NewSyncProducer")
	msgs := make([]*sarama.ProducerMessage, 0, *n)
	for i := 0; i < *n; i++ {
		msgs = append(msgs, saramaMsg("group", i))
	}
	check(sp.SendMessages(msgs), "SendMessages")
	sp.Close()
	count := func() int {
		c := 0
		seen.Range(func(_, _ any) bool { c++; return true })
		return c
	}
	for count() < *n {
		if ctx.Err() != nil {
			die("sarama group read %d of %d", count(), *n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	after := owners()
	// Describe while the members are still in.
	dg, err := admin.DescribeConsumerGroups([]string{*group})
	check(err, "DescribeConsumerGroups")
	desc := map[string]any{}
	if len(dg) == 1 {
		desc = map[string]any{"state": dg[0].State, "protocol": dg[0].Protocol, "protocol_type": dg[0].ProtocolType, "members": len(dg[0].Members), "err": int16(dg[0].Err)}
	}
	cancel()
	for _, g := range groups {
		check(g.Close(), "ConsumerGroup.Close")
	}
	wg.Wait()
	ps := make([]int32, *parts)
	for i := range ps {
		ps[i] = int32(i)
	}
	co, err := admin.ListConsumerGroupOffsets(*group, map[string][]int32{*topic: ps})
	check(err, "ListConsumerGroupOffsets")
	committed := map[string]int64{}
	for p, b := range co.Blocks[*topic] {
		committed[fmt.Sprint(p)] = b.Offset
	}
	lg, err := admin.ListConsumerGroups()
	check(err, "ListConsumerGroups")
	var outMembers []map[string]any
	for _, m := range ms {
		outMembers = append(outMembers, map[string]any{"records": m.recs})
	}
	emit(map[string]any{"members": outMembers, "owners_before": before, "owners_after": after,
		"committed": committed, "described": desc, "listed_type": lg[*group]})
}

// sarama-admin: ClusterAdmin over -topic: create (2 partitions, a config),
// list, describe, create partitions (to 4), describe/alter configs
// (AlterConfig and IncrementalAlterConfig), describe the cluster, delete.
func saramaAdmin(ctx context.Context) {
	admin, err := sarama.NewClusterAdmin([]string{*brokers}, saramaConfig())
	check(err, "NewClusterAdmin")
	defer admin.Close()
	t := *topic
	out := map[string]any{}
	ret := "3600000"
	check(admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1, ConfigEntries: map[string]*string{"retention.ms": &ret}}, false), "CreateTopic")
	err = admin.CreateTopic(t, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false)
	out["create_again"] = errText(err)
	bad := admin.CreateTopic(t+"-bad", &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 3}, false)
	out["create_rf3"] = errText(bad)

	lt, err := admin.ListTopics()
	check(err, "ListTopics")
	d := lt[t]
	out["listed"] = map[string]any{"present": lt[t].NumPartitions > 0, "partitions": d.NumPartitions, "rf": d.ReplicationFactor}
	dt, err := admin.DescribeTopics([]string{t})
	check(err, "DescribeTopics")
	var pinfo []map[string]any
	for _, p := range dt[0].Partitions {
		pinfo = append(pinfo, map[string]any{"p": p.ID, "leader": p.Leader, "replicas": p.Replicas, "isr": p.Isr, "err": int16(p.Err)})
	}
	sort.Slice(pinfo, func(i, j int) bool { return pinfo[i]["p"].(int32) < pinfo[j]["p"].(int32) })
	out["described"] = map[string]any{"err": int16(dt[0].Err), "partitions": pinfo}

	check(admin.CreatePartitions(t, 4, nil, false), "CreatePartitions")
	out["create_partitions_lower"] = errText(admin.CreatePartitions(t, 3, nil, false))
	dt, err = admin.DescribeTopics([]string{t})
	check(err, "DescribeTopics after CreatePartitions")
	out["partitions_after"] = len(dt[0].Partitions)

	res := sarama.ConfigResource{Type: sarama.TopicResource, Name: t}
	cfgs := func() map[string]any {
		es, err := admin.DescribeConfig(res)
		check(err, "DescribeConfig")
		m := map[string]any{}
		for _, e := range es {
			m[e.Name] = map[string]any{"value": e.Value, "source": e.Source.String(), "default": e.Default}
		}
		return m
	}
	out["configs"] = cfgs()
	seg := "700000"
	check(admin.AlterConfig(sarama.TopicResource, t, map[string]*string{"segment.ms": &seg}, false), "AlterConfig")
	out["configs_after_alter"] = cfgs()
	mmb := "300000"
	check(admin.IncrementalAlterConfig(sarama.TopicResource, t, map[string]sarama.IncrementalAlterConfigsEntry{
		"max.message.bytes": {Operation: sarama.IncrementalAlterConfigsOperationSet, Value: &mmb},
		"segment.ms":        {Operation: sarama.IncrementalAlterConfigsOperationDelete},
	}, false), "IncrementalAlterConfig")
	out["configs_after_incremental"] = cfgs()

	brokersOut, controller, err := admin.DescribeCluster()
	check(err, "DescribeCluster")
	var bs []map[string]any
	for _, b := range brokersOut {
		bs = append(bs, map[string]any{"id": b.ID(), "addr": b.Addr()})
	}
	out["cluster"] = map[string]any{"controller": controller, "brokers": bs}

	check(admin.DeleteTopic(t), "DeleteTopic")
	out["delete_again"] = errText(admin.DeleteTopic(t))
	deadline := time.Now().Add(10 * time.Second)
	for {
		lt, err = admin.ListTopics()
		check(err, "ListTopics after delete")
		if _, ok := lt[t]; !ok || time.Now().After(deadline) {
			out["present_after_delete"] = ok
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	emit(out)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	var te *sarama.TopicError
	if errors.As(err, &te) {
		return te.Err.Error()
	}
	var tpe *sarama.TopicPartitionError
	if errors.As(err, &tpe) {
		return tpe.Err.Error()
	}
	return err.Error()
}

// sarama-txn: one transactional SyncProducer (-txnid), three transactions
// of -n records: "commit1" committed, "abort" aborted, "commit2" committed.
func saramaTxn(ctx context.Context) {
	admin, err := sarama.NewClusterAdmin([]string{*brokers}, saramaConfig())
	check(err, "NewClusterAdmin")
	saramaEnsureTopic(admin, *topic, *parts)
	admin.Close()
	cfg := saramaConfig()
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Idempotent = true
	cfg.Producer.Transaction.ID = *txnID
	cfg.Producer.Compression = saramaCodec(*codec)
	cfg.Net.MaxOpenRequests = 1
	sp, err := sarama.NewSyncProducer([]string{*brokers}, cfg)
	check(err, "NewSyncProducer (transactional)")
	defer sp.Close()
	out := map[string]any{}
	base := 0
	for _, step := range []struct {
		tag    string
		commit bool
	}{{"commit1", true}, {"abort", false}, {"commit2", true}} {
		check(sp.BeginTxn(), "BeginTxn")
		var recs []Rec
		for i := base; i < base+*n; i++ {
			p, o, err := sp.SendMessage(saramaMsg(step.tag, i))
			check(err, "SendMessage in a transaction")
			recs = append(recs, Rec{P: p, O: o, K: keyOf(i), V: valueOf(step.tag, i)})
		}
		base += *n
		if step.commit {
			check(sp.CommitTxn(), "CommitTxn")
		} else {
			check(sp.AbortTxn(), "AbortTxn")
		}
		out[step.tag] = recs
	}
	emit(out)
}
