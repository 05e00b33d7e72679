package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// kadm-extra: the rest of kadm over a topic a transactional producer
// (-txnid) wrote to with -partitions partitions: producers, transactions,
// leader epochs, log dirs, offsets by isolation / timestamp, group offset
// deletion, coordinators, elections, quotas, reassignments. Errors are
// reported per call, not fatal.
func kadmExtra(ctx context.Context) {
	adm := kadm.NewClient(kgoClient())
	defer adm.Close()
	t := *topic
	out := map[string]any{}
	ps := make([]int32, *parts)
	for i := range ps {
		ps[i] = int32(i)
	}
	set := kadm.TopicsSet{}
	set.Add(t, ps...)

	dp, err := adm.DescribeProducers(ctx, set)
	if err != nil {
		out["producers_err"] = err.Error()
	} else {
		var prods []map[string]any
		dp.EachPartition(func(p kadm.DescribedProducersPartition) {
			if p.Err != nil {
				prods = append(prods, map[string]any{"p": p.Partition, "err": p.Err.Error()})
				return
			}
			p.ActiveProducers.Each(func(d kadm.DescribedProducer) {
				prods = append(prods, map[string]any{"p": p.Partition, "pid": d.ProducerID, "epoch": d.ProducerEpoch, "last_seq": d.LastSequence, "txn_start": d.CurrentTxnStartOffset})
			})
		})
		out["producers"] = prods
	}
	dt, err := adm.DescribeTransactions(ctx, *txnID)
	if err != nil {
		out["describe_txn_err"] = err.Error()
	} else {
		d := dt[*txnID]
		out["describe_txn"] = map[string]any{"state": d.State, "pid": d.ProducerID, "timeout": d.TimeoutMillis, "err": errString(d.Err), "topics": len(d.Topics)}
	}
	lt, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil {
		out["list_txn_err"] = err.Error()
	} else {
		l, ok := lt[*txnID]
		out["list_txn"] = map[string]any{"present": ok, "state": l.State, "pid": l.ProducerID}
	}

	var req kadm.OffsetForLeaderEpochRequest
	for _, p := range ps {
		req.Add(t, p, 0)
	}
	le, err := adm.OffsetForLeaderEpoch(ctx, req)
	if err != nil {
		out["leader_epoch_err"] = err.Error()
	} else {
		m := map[string]any{}
		for _, p := range ps {
			x := le[t][p]
			m[fmt.Sprint(p)] = map[string]any{"epoch": x.LeaderEpoch, "end": x.EndOffset, "err": errString(x.Err)}
		}
		out["leader_epoch"] = m
	}

	ld, err := adm.DescribeAllLogDirs(ctx, set)
	if err != nil {
		out["logdirs_err"] = err.Error()
	} else {
		sizes := map[string]int64{}
		ld.Each(func(d kadm.DescribedLogDir) {
			d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
				if p.Topic == t {
					sizes[fmt.Sprint(p.Partition)] = p.Size
				}
			})
		})
		out["logdir_sizes"] = sizes
	}

	list := func(name string, f func() (kadm.ListedOffsets, error)) {
		lo, err := f()
		if err != nil {
			out[name+"_err"] = err.Error()
			return
		}
		m := map[string]any{}
		for _, p := range ps {
			x := lo[t][p]
			m[fmt.Sprint(p)] = map[string]any{"o": x.Offset, "ts": x.Timestamp, "err": errString(x.Err)}
		}
		out[name] = m
	}
	list("end", func() (kadm.ListedOffsets, error) { return adm.ListEndOffsets(ctx, t) })
	list("committed_end", func() (kadm.ListedOffsets, error) { return adm.ListCommittedOffsets(ctx, t) })
	list("max_ts", func() (kadm.ListedOffsets, error) { return adm.ListMaxTimestampOffsets(ctx, t) })
	list("after_0", func() (kadm.ListedOffsets, error) { return adm.ListOffsetsAfterMilli(ctx, 0, t) })
	list("after_future", func() (kadm.ListedOffsets, error) {
		return adm.ListOffsetsAfterMilli(ctx, time.Now().Add(time.Hour).UnixMilli(), t)
	})

	g := t + "-extra"
	co := make(kadm.Offsets)
	co.Add(kadm.Offset{Topic: t, Partition: 0, At: 1, LeaderEpoch: -1})
	co.Add(kadm.Offset{Topic: t, Partition: 1, At: 2, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(ctx, g, co); err != nil {
		out["commit_err"] = err.Error()
	}
	ds := kadm.TopicsSet{}
	ds.Add(t, 0)
	do, err := adm.DeleteOffsets(ctx, g, ds)
	if err != nil {
		out["delete_offsets_err"] = err.Error()
	} else {
		out["delete_offsets"] = errString(do.Error())
	}
	fo, err := adm.FetchOffsets(ctx, g)
	if err == nil {
		m := map[string]int64{}
		for _, p := range ps {
			if o, ok := fo.Lookup(t, p); ok {
				m[fmt.Sprint(p)] = o.At
			}
		}
		out["offsets_after_delete"] = m
	} else {
		out["offsets_after_delete_err"] = err.Error()
	}
	fc := adm.FindGroupCoordinators(ctx, g)
	for _, c := range fc {
		out["coordinator"] = map[string]any{"node": c.NodeID, "err": errString(c.Err)}
	}
	tc := adm.FindTxnCoordinators(ctx, *txnID)
	for _, c := range tc {
		out["txn_coordinator"] = map[string]any{"node": c.NodeID, "err": errString(c.Err)}
	}
	el, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		out["elect_err"] = err.Error()
	} else {
		m := map[string]string{}
		for _, p := range ps {
			m[fmt.Sprint(p)] = errString(el[t][p].Err)
		}
		out["elect"] = m
	}
	q, err := adm.DescribeClientQuotas(ctx, false, nil)
	out["quotas_err"], out["quotas"] = errString(err), len(q)
	lr, err := adm.ListPartitionReassignments(ctx, set)
	out["reassignments_err"], out["reassignments"] = errString(err), len(lr)
	emit(out)
}
