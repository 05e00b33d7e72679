"""PyPI's newest Python clients, driven by test_py_clients_new.py.

Runs under the venv of scripts/pyclients.txt (samsa_harness.pypi_python():
confluent-kafka 2.16.1 with its bundled librdkafka 2.16.0, aiokafka
0.14.0). One subcommand per scenario; each prints one JSON object with what
it saw, and exits non-zero on a client error.

    python pyclients_new.py SUBCOMMAND '{"bootstrap": "127.0.0.1:9092", ...}'
"""

import asyncio
import json
import sys
import threading
import time


def key(i):
    return "k%05d" % i


def value(tag, i):
    return "%s-%05d-%s" % (tag, i, "x" * (i % 50))


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, file=sys.stderr, flush=True)


# -- confluent-kafka ---------------------------------------------------------

def ck():
    import confluent_kafka
    import confluent_kafka.admin  # noqa: F401 - confluent_kafka.admin below
    return confluent_kafka


def ck_admin(a):
    return ck().admin.AdminClient({"bootstrap.servers": a["bootstrap"]})


def ck_ensure(a, topic, partitions):
    adm = ck_admin(a)
    fs = adm.create_topics([ck().admin.NewTopic(topic, partitions, 1)])
    for f in fs.values():
        try:
            f.result(30)
        except ck().KafkaException as e:
            if e.args[0].code() != ck().KafkaError.TOPIC_ALREADY_EXISTS:
                raise


def ck_produce_recs(p, topic, tag, first, count, parts, headers=None):
    out, errs = [], []

    def cb(err, m):
        if err is not None:
            errs.append(str(err))
        else:
            out.append({"p": m.partition(), "o": m.offset(), "k": m.key().decode(),
                        "v": m.value().decode()})
    for i in range(first, first + count):
        p.produce(topic, key=key(i), value=value(tag, i), partition=i % parts,
                  headers=headers or [("i", str(i))], on_delivery=cb)
        p.poll(0)
    left = p.flush(30)
    if left or errs:
        raise SystemExit("produce: %d undelivered, errors %s" % (left, errs[:3]))
    return out


def cmd_ck_produce(a):
    ck_ensure(a, a["topic"], a["partitions"])
    conf = {"bootstrap.servers": a["bootstrap"], "compression.type": a["codec"],
            "acks": a["acks"], "enable.idempotence": a["idempotent"], "linger.ms": 5}
    p = ck().Producer(conf)
    return {"records": ck_produce_recs(p, a["topic"], a["codec"], 0, a["n"], a["partitions"])}


def ck_rec(m):
    return {"p": m.partition(), "o": m.offset(), "k": m.key().decode() if m.key() else None,
            "v": m.value().decode() if m.value() is not None else None,
            "h": {k: v.decode() for k, v in (m.headers() or [])}}


def cmd_ck_consume(a):
    """Every partition from the start, without a group; until n records and
    then `idle` seconds without more."""
    c = ck().Consumer({"bootstrap.servers": a["bootstrap"], "group.id": "unused-" + a["topic"],
                       "enable.auto.commit": False,
                       "isolation.level": a.get("isolation", "read_uncommitted")})
    md = c.list_topics(a["topic"], timeout=10)
    parts = sorted(md.topics[a["topic"]].partitions)
    c.assign([ck().TopicPartition(a["topic"], p, ck().OFFSET_BEGINNING) for p in parts])
    got, last, deadline = [], time.time(), time.time() + a.get("timeout", 30)
    while not (len(got) >= a["n"] and time.time() - last > a.get("idle", 1.0)):
        if time.time() > deadline:
            raise SystemExit("consume: %d of %d records by the deadline" % (len(got), a["n"]))
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            if m.error().code() == ck().KafkaError._PARTITION_EOF:
                continue
            raise SystemExit("consume: %s" % m.error())
        got.append(ck_rec(m))
        last = time.time()
    c.close()
    return {"records": got}


def cmd_ck_group(a):
    """`members` consumers of one group in threads (classic with
    partition.assignment.strategy, or KIP-848 with group.protocol=consumer
    and group.remote.assignor); once they split the partitions, n records
    are produced, read, committed per record."""
    t, parts = a["topic"], a["partitions"]
    ck_ensure(a, t, parts)
    owners = [set() for _ in range(a["members"])]
    recs = [[] for _ in range(a["members"])]
    seen, lock, stop, errors = set(), threading.Lock(), threading.Event(), []

    def member(i):
        conf = {"bootstrap.servers": a["bootstrap"], "group.id": a["group"],
                "auto.offset.reset": "earliest", "enable.auto.commit": False,
                "client.id": "ck-member-%d" % i}
        if a["protocol"] == "consumer":
            conf.update({"group.protocol": "consumer", "group.remote.assignor": a["assignor"]})
        else:
            conf.update({"partition.assignment.strategy": a["assignor"],
                         "session.timeout.ms": 10000, "heartbeat.interval.ms": 500})
        c = ck().Consumer(conf)
        cooperative = a["protocol"] == "consumer" or a["assignor"] == "cooperative-sticky"

        def on_assign(cons, tps):
            with lock:
                if not cooperative:
                    owners[i].clear()
                owners[i].update(tp.partition for tp in tps)

        def on_revoke(cons, tps):
            with lock:
                for tp in tps:
                    owners[i].discard(tp.partition)
        c.subscribe([a.get("regex") or t], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
        try:
            while not stop.is_set():
                m = c.poll(0.2)
                if m is None:
                    continue
                if m.error():
                    if m.error().code() != ck().KafkaError._PARTITION_EOF:
                        log("member", i, m.error())
                    continue
                c.commit(message=m, asynchronous=False)
                with lock:
                    recs[i].append(ck_rec(m))
                    seen.add((m.partition(), m.offset()))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append("member %d: %r" % (i, e))
        finally:
            c.close()

    threads = [threading.Thread(target=member, args=(i,)) for i in range(a["members"])]
    for th in threads:
        th.start()
    deadline = time.time() + a.get("timeout", 60)

    def snapshot():
        with lock:
            return [sorted(o) for o in owners]
    try:
        while True:
            o = snapshot()
            flat = sorted(p for ps in o for p in ps)
            if flat == list(range(parts)) and all(o):
                break
            if time.time() > deadline or errors:
                raise SystemExit("group never settled: %s %s" % (o, errors))
            time.sleep(0.05)
        before = o
        log("settled", before)
        p = ck().Producer({"bootstrap.servers": a["bootstrap"], "linger.ms": 5})
        produced = ck_produce_recs(p, t, "group", 0, a["n"], parts)
        while True:
            with lock:
                if len(seen) >= a["n"]:
                    break
            if time.time() > deadline or errors:
                raise SystemExit("group read %d of %d: %s" % (len(seen), a["n"], errors))
            time.sleep(0.05)
        after = snapshot()
        adm = ck_admin(a)
        desc = adm.describe_consumer_groups([a["group"]])[a["group"]].result(20)
        described = {"state": desc.state.name, "members": len(desc.members),
                     "assignor": desc.partition_assignor,
                     "type": getattr(getattr(desc, "type", None), "name", None)}
    finally:
        stop.set()
        for th in threads:
            th.join(30)
    if errors:
        raise SystemExit("; ".join(errors))
    res = adm.list_consumer_group_offsets(
        [ck().ConsumerGroupTopicPartitions(a["group"], [ck().TopicPartition(t, p) for p in range(parts)])])
    offs = res[a["group"]].result(20)
    committed = {str(tp.partition): tp.offset for tp in offs.topic_partitions}
    listed = adm.list_consumer_groups().result(20)
    lg = {g.group_id: g for g in listed.valid}
    g = lg.get(a["group"])
    return {"members": [{"records": r} for r in recs], "owners_before": before,
            "owners_after": after, "produced": produced, "committed": committed,
            "described": described,
            "listed": {"present": g is not None,
                       "type": getattr(getattr(g, "type", None), "name", None) if g else None}}


def cmd_ck_txn(a):
    """commit, abort, commit: n records each."""
    t, parts = a["topic"], a["partitions"]
    ck_ensure(a, t, parts)
    p = ck().Producer({"bootstrap.servers": a["bootstrap"], "transactional.id": a["txnid"],
                       "compression.type": a.get("codec", "none"), "linger.ms": 5})
    p.init_transactions(30)
    out, base = {}, 0
    for tag, commit in (("commit1", True), ("abort", False), ("commit2", True)):
        p.begin_transaction()
        out[tag] = ck_produce_recs(p, t, tag, base, a["n"], parts)
        base += a["n"]
        if commit:
            p.commit_transaction(30)
        else:
            p.abort_transaction(30)
    return out


def cmd_ck_admin(a):
    k = ck()
    adm = ck_admin(a)
    t = a["topic"]
    out = {}

    def err_of(f):
        try:
            f.result(30)
            return ""
        except k.KafkaException as e:
            return e.args[0].name()

    fs = adm.create_topics([k.admin.NewTopic(t, 3, 1, config={"retention.ms": "3600000"})])
    out["create"] = err_of(fs[t])
    out["create_again"] = err_of(adm.create_topics([k.admin.NewTopic(t, 1, 1)])[t])
    out["create_rf3"] = err_of(adm.create_topics([k.admin.NewTopic(t + "-rf3", 1, 3)])[t + "-rf3"])
    md = adm.list_topics(timeout=10)
    out["listed"] = t in md.topics
    out["metadata_partitions"] = sorted(md.topics[t].partitions)
    dt = adm.describe_topics(k.TopicCollection([t]))[t].result(20)
    out["described"] = {"name": dt.name, "partitions": [
        {"p": p.id, "leader": p.leader.id, "replicas": [r.id for r in p.replicas],
         "isr": [r.id for r in p.isr]} for p in dt.partitions]}
    out["create_partitions"] = err_of(adm.create_partitions([k.admin.NewPartitions(t, 5)])[t])
    out["create_partitions_lower"] = err_of(adm.create_partitions([k.admin.NewPartitions(t, 2)])[t])
    out["partitions_after"] = len(adm.list_topics(t, timeout=10).topics[t].partitions)

    res = k.admin.ConfigResource(k.admin.ResourceType.TOPIC, t)

    def configs():
        d = adm.describe_configs([res])[res].result(20)
        return {n: {"value": e.value, "source": e.source, "default": e.is_default}
                for n, e in d.items()}
    out["configs"] = configs()
    inc = k.admin.ConfigResource(k.admin.ResourceType.TOPIC, t, incremental_configs=[
        k.admin.ConfigEntry("max.message.bytes", "300000",
                            incremental_operation=k.admin.AlterConfigOpType.SET),
        k.admin.ConfigEntry("retention.ms", None,
                            incremental_operation=k.admin.AlterConfigOpType.DELETE)])
    out["incremental_alter"] = err_of(adm.incremental_alter_configs([inc])[inc])
    out["configs_after_incremental"] = configs()
    bad = k.admin.ConfigResource(k.admin.ResourceType.TOPIC, t, incremental_configs=[
        k.admin.ConfigEntry("retention.ms", "x", incremental_operation=k.admin.AlterConfigOpType.SET)])
    out["incremental_bad"] = err_of(adm.incremental_alter_configs([bad])[bad])

    p = k.Producer({"bootstrap.servers": a["bootstrap"]})
    ck_produce_recs(p, t, "admin", 0, 50, 5)
    req = {k.TopicPartition(t, i): k.admin.OffsetSpec.earliest() for i in range(5)}
    out["earliest"] = {str(tp.partition): r.offset for tp, r in
                       ((tp, f.result(20)) for tp, f in adm.list_offsets(req).items())}
    req = {k.TopicPartition(t, i): k.admin.OffsetSpec.latest() for i in range(5)}
    out["latest"] = {str(tp.partition): r.offset for tp, r in
                     ((tp, f.result(20)) for tp, f in adm.list_offsets(req).items())}
    dr = adm.delete_records([k.TopicPartition(t, 0, 3), k.TopicPartition(t, 1, 10)])
    out["delete_records"] = {str(tp.partition): f.result(20).low_watermark for tp, f in dr.items()}
    req = {k.TopicPartition(t, i): k.admin.OffsetSpec.earliest() for i in range(5)}
    out["earliest_after_delete"] = {str(tp.partition): r.offset for tp, r in
                                    ((tp, f.result(20)) for tp, f in adm.list_offsets(req).items())}

    g = t + "-group"
    c = k.Consumer({"bootstrap.servers": a["bootstrap"], "group.id": g})
    c.commit(offsets=[k.TopicPartition(t, 2, 7)], asynchronous=False)
    c.close()
    lo = adm.list_consumer_group_offsets([k.ConsumerGroupTopicPartitions(g, [k.TopicPartition(t, 2)])])
    out["group_offset"] = lo[g].result(20).topic_partitions[0].offset
    out["groups"] = sorted(x.group_id for x in adm.list_consumer_groups().result(20).valid)
    dg = adm.describe_consumer_groups([g])[g].result(20)
    out["group"] = {"state": dg.state.name, "members": len(dg.members)}
    out["delete_group"] = err_of(adm.delete_consumer_groups([g])[g])

    cl = adm.describe_cluster().result(20)
    out["cluster"] = {"id": cl.cluster_id, "controller": cl.controller.id if cl.controller else None,
                      "nodes": [{"id": n.id, "host": n.host, "port": n.port} for n in cl.nodes]}
    out["delete"] = err_of(adm.delete_topics([t])[t])
    deadline = time.time() + 10
    while t in adm.list_topics(timeout=10).topics and time.time() < deadline:
        time.sleep(0.1)
    out["listed_after_delete"] = t in adm.list_topics(timeout=10).topics
    return out


# -- aiokafka ----------------------------------------------------------------

async def aio_ensure(a, topic, partitions):
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import TopicAlreadyExistsError
    adm = AIOKafkaAdminClient(bootstrap_servers=a["bootstrap"])
    await adm.start()
    try:
        await adm.create_topics([NewTopic(topic, partitions, 1)])
    except TopicAlreadyExistsError:
        pass
    finally:
        await adm.close()


async def aio_produce_recs(a, topic, tag, first, count, parts, **kw):
    from aiokafka import AIOKafkaProducer
    p = AIOKafkaProducer(bootstrap_servers=a["bootstrap"], linger_ms=5, **kw)
    await p.start()
    try:
        futs = []
        for i in range(first, first + count):
            futs.append(await p.send(topic, key=key(i).encode(), value=value(tag, i).encode(),
                                     partition=i % parts, headers=[("i", str(i).encode())]))
        mds = await asyncio.gather(*futs)
    finally:
        await p.stop()
    return [{"p": md.partition, "o": md.offset, "k": key(i), "v": value(tag, i)}
            for i, md in zip(range(first, first + count), mds)]


async def cmd_aio_produce(a):
    await aio_ensure(a, a["topic"], a["partitions"])
    codec = None if a["codec"] == "none" else a["codec"]
    acks = "all" if a["acks"] == "all" else 1
    kw = {"compression_type": codec, "acks": acks}
    if a["idempotent"]:
        kw["enable_idempotence"] = True
    return {"records": await aio_produce_recs(a, a["topic"], a["codec"], 0, a["n"],
                                              a["partitions"], **kw)}


def aio_rec(m):
    return {"p": m.partition, "o": m.offset, "k": m.key.decode(), "v": m.value.decode(),
            "h": {k: v.decode() for k, v in m.headers}}


async def cmd_aio_consume(a):
    from aiokafka import AIOKafkaConsumer, TopicPartition
    c = AIOKafkaConsumer(bootstrap_servers=a["bootstrap"], group_id=None,
                         enable_auto_commit=False, auto_offset_reset="earliest",
                         isolation_level=a.get("isolation", "read_uncommitted"))
    await c.start()
    got = []
    try:
        parts = c.partitions_for_topic(a["topic"]) or set()
        if not parts:
            await c._client.force_metadata_update()
            parts = c.partitions_for_topic(a["topic"]) or set()
        c.assign([TopicPartition(a["topic"], p) for p in sorted(parts)])
        await c.seek_to_beginning()
        last, deadline = time.time(), time.time() + a.get("timeout", 30)
        while not (len(got) >= a["n"] and time.time() - last > a.get("idle", 1.0)):
            if time.time() > deadline:
                raise SystemExit("consume: %d of %d records" % (len(got), a["n"]))
            batch = await c.getmany(timeout_ms=200)
            for tp in sorted(batch, key=lambda tp: tp.partition):
                for m in batch[tp]:
                    got.append(aio_rec(m))
                    last = time.time()
    finally:
        await c.stop()
    return {"records": got}


async def cmd_aio_group(a):
    """Two aiokafka group members (classic protocol, the assignor given),
    committing after each batch; records produced once they split."""
    from aiokafka import AIOKafkaConsumer
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    assignor = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
                "sticky": StickyPartitionAssignor}[a["assignor"]]
    t, parts = a["topic"], a["partitions"]
    await aio_ensure(a, t, parts)
    cs = [AIOKafkaConsumer(t, bootstrap_servers=a["bootstrap"], group_id=a["group"],
                           enable_auto_commit=False, auto_offset_reset="earliest",
                           partition_assignment_strategy=(assignor,),
                           session_timeout_ms=10000, heartbeat_interval_ms=500,
                           client_id="aio-member-%d" % i)
          for i in range(a["members"])]
    for c in cs:
        await c.start()
    recs = [[] for _ in cs]
    seen = set()
    stop = asyncio.Event()

    async def run(i, c):
        while not stop.is_set():
            batch = await c.getmany(timeout_ms=200)
            for tp, ms in batch.items():
                for m in ms:
                    recs[i].append(aio_rec(m))
                    seen.add((m.partition, m.offset))
            if batch:
                await c.commit()
    tasks = [asyncio.create_task(run(i, c)) for i, c in enumerate(cs)]
    deadline = time.time() + a.get("timeout", 60)

    def owners():
        return [sorted(tp.partition for tp in c.assignment()) for c in cs]
    try:
        while True:
            o = owners()
            if sorted(p for ps in o for p in ps) == list(range(parts)) and all(o):
                break
            for tk in tasks:
                if tk.done():
                    tk.result()
            if time.time() > deadline:
                raise SystemExit("aiokafka group never settled: %s" % o)
            await asyncio.sleep(0.05)
        before = owners()
        produced = await aio_produce_recs(a, t, "group", 0, a["n"], parts)
        while len(seen) < a["n"]:
            for tk in tasks:
                if tk.done():
                    tk.result()
            if time.time() > deadline:
                raise SystemExit("aiokafka group read %d of %d" % (len(seen), a["n"]))
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        after = owners()
        committed = {}
        from aiokafka import TopicPartition
        for p in range(parts):
            committed[str(p)] = await cs[0].committed(TopicPartition(t, p))
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        for c in cs:
            await c.stop()
    return {"members": [{"records": r} for r in recs], "owners_before": before,
            "owners_after": after, "produced": produced, "committed": committed}


async def cmd_aio_txn(a):
    """commit, abort, commit with one transactional AIOKafkaProducer: n
    records each."""
    from aiokafka import AIOKafkaProducer
    t, parts = a["topic"], a["partitions"]
    await aio_ensure(a, t, parts)
    p = AIOKafkaProducer(bootstrap_servers=a["bootstrap"], transactional_id=a["txnid"],
                         linger_ms=5)
    await p.start()
    out, base = {}, 0
    try:
        for tag, commit in (("commit1", True), ("abort", False), ("commit2", True)):
            await p.begin_transaction()
            futs = []
            for i in range(base, base + a["n"]):
                futs.append(await p.send(t, key=key(i).encode(), value=value(tag, i).encode(),
                                         partition=i % parts, headers=[("i", str(i).encode())]))
            mds = await asyncio.gather(*futs)
            out[tag] = [{"p": md.partition, "o": md.offset, "k": key(i), "v": value(tag, i)}
                        for i, md in zip(range(base, base + a["n"]), mds)]
            base += a["n"]
            if commit:
                await p.commit_transaction()
            else:
                await p.abort_transaction()
    finally:
        await p.stop()
    return out


COMMANDS = {
    "aio-txn": cmd_aio_txn,
    "ck-produce": cmd_ck_produce, "ck-consume": cmd_ck_consume, "ck-group": cmd_ck_group,
    "ck-txn": cmd_ck_txn, "ck-admin": cmd_ck_admin,
    "aio-produce": cmd_aio_produce, "aio-consume": cmd_aio_consume, "aio-group": cmd_aio_group,
}


def main():
    cmd, args = sys.argv[1], json.loads(sys.argv[2])
    if cmd == "versions":
        import importlib.metadata
        import aiokafka
        import confluent_kafka
        out = {"confluent_kafka": importlib.metadata.version("confluent-kafka"),
               "librdkafka": confluent_kafka.libversion()[0], "aiokafka": aiokafka.__version__}
    else:
        fn = COMMANDS[cmd]
        out = asyncio.run(fn(args)) if asyncio.iscoroutinefunction(fn) else fn(args)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
