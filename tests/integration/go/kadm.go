package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ensureTopics creates the topics with -partitions partitions (one
// replica) unless -create=false; TOPIC_ALREADY_EXISTS is fine.
func ensureTopics(ctx context.Context, topics ...string) {
	if !*create {
		return
	}
	adm := kadm.NewClient(kgoClient())
	defer adm.Close()
	rs, err := adm.CreateTopics(ctx, int32(*parts), 1, nil, topics...)
	check(err, "CreateTopics")
	for _, r := range rs {
		if r.Err != nil && !errors.Is(r.Err, kerr.TopicAlreadyExists) {
			die("CreateTopics %s: %v", r.Topic, r.Err)
		}
	}
}

func configMap(rc kadm.ResourceConfig) map[string]any {
	m := map[string]any{}
	for _, c := range rc.Configs {
		m[c.Key] = map[string]any{"value": c.MaybeValue(), "source": c.Source.String()}
	}
	return m
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// kadm: one admin session over -topic: create (3 partitions, a config),
// list, describe, create partitions (to 5), describe/alter configs
// (incremental and legacy), produce, list offsets, delete records, a
// committed group's offsets, list/describe groups, broker metadata and
// configs, delete the topic. Everything seen goes into the output.
func kadmScenario(ctx context.Context) {
	cl := kgoClient()
	adm := kadm.NewClient(cl)
	defer adm.Close()
	out := map[string]any{}
	t := *topic

	ct, err := adm.CreateTopics(ctx, 3, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("delete"), "retention.ms": kadm.StringPtr("3600000")}, t)
	check(err, "CreateTopics")
	r := ct[t]
	out["create"] = map[string]any{"err": errString(r.Err), "partitions": r.NumPartitions, "rf": r.ReplicationFactor, "id": r.ID.String()}
	dup, err := adm.CreateTopics(ctx, 1, 1, nil, t)
	check(err, "CreateTopics (again)")
	out["create_again_err"] = errString(dup[t].Err)

	lt, err := adm.ListTopics(ctx)
	check(err, "ListTopics")
	out["listed"] = lt.Names()
	td := lt[t]
	var pinfo []map[string]any
	for _, p := range td.Partitions.Sorted() {
		pinfo = append(pinfo, map[string]any{"p": p.Partition, "leader": p.Leader, "replicas": p.Replicas, "isr": p.ISR, "err": errString(p.Err)})
	}
	out["topic"] = map[string]any{"id": td.ID.String(), "partitions": pinfo, "err": errString(td.Err)}

	cp, err := adm.UpdatePartitions(ctx, 5, t)
	check(err, "UpdatePartitions")
	out["update_partitions_err"] = errString(cp[t].Err)
	cp2, err := adm.CreatePartitions(ctx, 1, t)
	check(err, "CreatePartitions")
	out["create_partitions_err"] = errString(cp2[t].Err)
	lt2, err := adm.ListTopics(ctx, t)
	check(err, "ListTopics after CreatePartitions")
	out["partitions_after"] = len(lt2[t].Partitions)

	rc, err := adm.DescribeTopicConfigs(ctx, t)
	check(err, "DescribeTopicConfigs")
	out["configs"] = configMap(rc[0])
	ac, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("7200000")},
		{Op: kadm.SetConfig, Name: "max.message.bytes", Value: kadm.StringPtr("200000")},
		{Op: kadm.DeleteConfig, Name: "cleanup.policy"},
	}, t)
	check(err, "AlterTopicConfigs")
	out["alter_err"] = errString(ac[0].Err)
	rc, err = adm.DescribeTopicConfigs(ctx, t)
	check(err, "DescribeTopicConfigs after alter")
	out["configs_after_alter"] = configMap(rc[0])
	as, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "segment.ms", Value: kadm.StringPtr("600000")}}, t)
	check(err, "AlterTopicConfigsState")
	out["alter_state_err"] = errString(as[0].Err)
	rc, err = adm.DescribeTopicConfigs(ctx, t)
	check(err, "DescribeTopicConfigs after legacy alter")
	out["configs_after_state"] = configMap(rc[0])
	bad, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("notanumber")}}, t)
	check(err, "AlterTopicConfigs (bad value)")
	out["alter_bad_err"] = errString(bad[0].Err)

	// 10 records into each of partitions 0..4.
	*parts = 5
	prod := kgoClient(producerOpts()...)
	produceN(ctx, prod, "kadm", 0, 50)
	prod.Close()
	so, err := adm.ListStartOffsets(ctx, t)
	check(err, "ListStartOffsets")
	eo, err := adm.ListEndOffsets(ctx, t)
	check(err, "ListEndOffsets")
	out["start"], out["end"] = offsetsOf(so, t), offsetsOf(eo, t)

	del := make(kadm.Offsets)
	del.Add(kadm.Offset{Topic: t, Partition: 0, At: 4})
	del.Add(kadm.Offset{Topic: t, Partition: 1, At: -1}) // the high watermark
	dr, err := adm.DeleteRecords(ctx, del)
	check(err, "DeleteRecords")
	drs := map[string]any{}
	for _, p := range []int32{0, 1} {
		x, _ := dr.Lookup(t, p)
		drs[fmt.Sprint(p)] = map[string]any{"low": x.LowWatermark, "err": errString(x.Err)}
	}
	out["delete_records"] = drs
	so, err = adm.ListStartOffsets(ctx, t)
	check(err, "ListStartOffsets after DeleteRecords")
	out["start_after_delete"] = offsetsOf(so, t)

	// Offsets of a group that has no members.
	g := t + "-group"
	co := make(kadm.Offsets)
	co.Add(kadm.Offset{Topic: t, Partition: 2, At: 7, LeaderEpoch: -1, Metadata: "m2"})
	co.Add(kadm.Offset{Topic: t, Partition: 3, At: 10, LeaderEpoch: -1})
	cr, err := adm.CommitOffsets(ctx, g, co)
	check(err, "CommitOffsets")
	check(cr.Error(), "CommitOffsets (partition error)")
	fo, err := adm.FetchOffsets(ctx, g)
	check(err, "FetchOffsets")
	fos := map[string]any{}
	for _, p := range []int32{2, 3} {
		o, ok := fo.Lookup(t, p)
		if ok {
			fos[fmt.Sprint(p)] = map[string]any{"at": o.At, "metadata": o.Metadata, "err": errString(o.Err)}
		}
	}
	out["fetched_offsets"] = fos
	lg, err := adm.ListGroups(ctx)
	check(err, "ListGroups")
	out["groups"] = lg.Groups()
	dg, err := adm.DescribeGroups(ctx, g)
	check(err, "DescribeGroups")
	out["group"] = map[string]any{"state": dg[g].State, "members": len(dg[g].Members), "err": errString(dg[g].Err)}
	lag, err := adm.Lag(ctx, g)
	check(err, "Lag")
	lags := map[string]int64{}
	for _, l := range lag[g].Lag.Sorted() {
		if l.Topic == t {
			lags[fmt.Sprint(l.Partition)] = l.Lag
		}
	}
	out["lag"] = lags
	dgr, err := adm.DeleteGroups(ctx, g)
	check(err, "DeleteGroups")
	out["delete_group_err"] = errString(dgr[g].Err)
	lg, err = adm.ListGroups(ctx)
	check(err, "ListGroups after delete")
	out["groups_after_delete"] = lg.Groups()

	md, err := adm.BrokerMetadata(ctx)
	check(err, "BrokerMetadata")
	var bs []map[string]any
	for _, b := range md.Brokers {
		bs = append(bs, map[string]any{"id": b.NodeID, "host": b.Host, "port": b.Port})
	}
	out["cluster"] = map[string]any{"id": md.Cluster, "controller": md.Controller, "brokers": bs}
	if len(md.Brokers) > 0 {
		brc, err := adm.DescribeBrokerConfigs(ctx, md.Brokers[0].NodeID)
		check(err, "DescribeBrokerConfigs")
		out["broker_configs_err"] = errString(brc[0].Err)
		out["broker_config_count"] = len(brc[0].Configs)
		bc := configMap(brc[0])
		out["broker_num_partitions"] = bc["num.partitions"]
	}
	av, err := adm.ApiVersions(ctx)
	check(err, "ApiVersions")
	av.Each(func(b kadm.BrokerApiVersions) {
		out["version_guess"] = b.VersionGuess()
		out["api_versions_err"] = errString(b.Err)
		keys := 0
		b.EachKeySorted(func(_, _, _ int16) { keys++ })
		out["api_keys"] = keys
	})

	dt, err := adm.DeleteTopics(ctx, t)
	check(err, "DeleteTopics")
	out["delete_err"] = errString(dt[t].Err)
	// Metadata may lag the deletion a little (as in Kafka): poll.
	deadline := time.Now().Add(10 * time.Second)
	for {
		lt, err = adm.ListTopics(ctx)
		check(err, "ListTopics after delete")
		if !lt.Has(t) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	out["listed_after_delete"] = lt.Names()
	emit(out)
}

func offsetsOf(lo kadm.ListedOffsets, t string) map[string]int64 {
	m := map[string]int64{}
	var ps []int32
	for p := range lo[t] {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	for _, p := range ps {
		o := lo[t][p]
		if o.Err != nil {
			die("listed offset %s/%d: %v", t, p, o.Err)
		}
		m[fmt.Sprint(p)] = o.Offset
	}
	return m
}

var _ = kgo.NoCompression
