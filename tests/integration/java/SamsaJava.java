// tests/integration/test_java_client.py drives the Java client (kafka-clients,
// pinned in pom.xml) through this program: `java -cp <cache>/lib/*:<classes>
// SamsaJava MODE BOOTSTRAP ARGS...`.  It prints one tab-separated line per
// fact (REC, ACK, OK, ERR, ...); the test checks those lines, not just the
// exit status.  Compiled by the test with plain javac.
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import java.util.stream.*;

import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.*;

public class SamsaJava {
    static String boot;
    // the harness's timeout scale (SAMSA_TEST_TIMEOUT_SCALE, x3 under a
    // sanitizer): every wait below is multiplied by it
    static final double SCALE = Double.parseDouble(System.getProperty("samsa.scale", "1"));

    static long ms(long base) {
        return (long) (base * SCALE);
    }

    static synchronized void out(Object... f) {
        System.out.println(Arrays.stream(f).map(String::valueOf)
                           .collect(Collectors.joining("\t")));
        System.out.flush();
    }

    static Properties producerProps(String acks, String codec, boolean idem) {
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("acks", acks);
        p.put("compression.type", codec);
        p.put("enable.idempotence", String.valueOf(idem));
        p.put("linger.ms", "20");
        p.put("delivery.timeout.ms", String.valueOf(ms(30000)));
        p.put("request.timeout.ms", String.valueOf(ms(10000)));
        return p;
    }

    static Properties consumerProps(String group, String protocol, String isolation) {
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("isolation.level", isolation);
        if (group != null) {
            p.put("group.id", group);
            p.put("group.protocol", protocol);
        }
        return p;
    }

    static Admin admin() {
        Properties p = new Properties();
        p.put("bootstrap.servers", boot);
        p.put("request.timeout.ms", String.valueOf(ms(10000)));
        p.put("default.api.timeout.ms", String.valueOf(ms(20000)));
        return Admin.create(p);
    }

    static void createTopic(String topic, int parts) throws Exception {
        try (Admin a = admin()) {
            a.createTopics(List.of(new NewTopic(topic, parts, (short) 1))).all().get();
        }
    }

    // produce TOPIC N ACKS CODEC IDEMPOTENT: N records k-i / CODEC-i-<pad>
    static void produce(String topic, int n, String acks, String codec, boolean idem)
            throws Exception {
        String pad = "x".repeat(200);
        try (KafkaProducer<String, String> pr =
                 new KafkaProducer<>(producerProps(acks, codec, idem))) {
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                fs.add(pr.send(new ProducerRecord<>(topic, 0, "k-" + i, codec + "-" + i + "-" + pad)));
            }
            pr.flush();
            for (Future<RecordMetadata> f : fs) {
                RecordMetadata m = f.get();
                out("ACK", m.partition(), m.offset());
            }
        }
        out("PRODUCED", n);
    }

    static List<ConsumerRecord<String, String>> drain(Consumer<String, String> c, int n,
                                                      long timeoutMs) {
        List<ConsumerRecord<String, String>> got = new ArrayList<>();
        long end = System.currentTimeMillis() + timeoutMs;
        while (got.size() < n && System.currentTimeMillis() < end) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                got.add(r);
            }
        }
        return got;
    }

    static void printRecs(List<ConsumerRecord<String, String>> recs) {
        for (ConsumerRecord<String, String> r : recs) {
            String v = r.value();
            if (v != null && v.length() > 40) v = v.substring(0, v.lastIndexOf('-'));
            out("REC", r.partition(), r.offset(), r.key(), v);
        }
    }

    // consume TOPIC N GROUP|- PROTOCOL ISOLATION: read N records (or until
    // a timeout), commit, print the committed offsets
    static void consume(String topic, int n, String group, String protocol,
                        String isolation) throws Exception {
        boolean useGroup = !group.equals("-");
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(
                 consumerProps(useGroup ? group : null, protocol, isolation))) {
            if (useGroup) {
                c.subscribe(List.of(topic));
            } else {
                List<TopicPartition> tps = c.partitionsFor(topic).stream()
                    .map(pi -> new TopicPartition(topic, pi.partition()))
                    .collect(Collectors.toList());
                c.assign(tps);
            }
            List<ConsumerRecord<String, String>> got = drain(c, n, ms(20000));
            // a little longer: more than N would be a bug too
            got.addAll(drain(c, Integer.MAX_VALUE, 500));
            printRecs(got);
            out("CONSUMED", got.size());
            if (useGroup) {
                c.commitSync();
                Map<TopicPartition, OffsetAndMetadata> com = c.committed(c.assignment());
                for (Map.Entry<TopicPartition, OffsetAndMetadata> e : com.entrySet()) {
                    out("COMMITTED", e.getKey().partition(),
                        e.getValue() == null ? -1 : e.getValue().offset());
                }
            }
        }
    }

    // roundtrip TOPIC N ACKS CODEC IDEMPOTENT: create, produce, read back
    static void roundtrip(String topic, int n, String acks, String codec, boolean idem)
            throws Exception {
        createTopic(topic, 1);
        produce(topic, n, acks, codec, idem);
        consume(topic, n, "-", "classic", "read_uncommitted");
    }

    // txn TOPIC TXID: commit c-0..4, abort a-0..4, commit c-5..9
    static void txn(String topic, String txid) throws Exception {
        Properties p = producerProps("all", "none", true);
        p.put("transactional.id", txid);
        p.put("transaction.timeout.ms", "30000");
        try (KafkaProducer<String, String> pr = new KafkaProducer<>(p)) {
            pr.initTransactions();
            out("STEP", "init");
            pr.beginTransaction();
            for (int i = 0; i < 5; i++) pr.send(new ProducerRecord<>(topic, 0, "k", "c-" + i));
            pr.commitTransaction();
            out("STEP", "commit1");
            pr.beginTransaction();
            for (int i = 0; i < 5; i++) pr.send(new ProducerRecord<>(topic, 0, "k", "a-" + i));
            pr.flush();
            pr.abortTransaction();
            out("STEP", "abort");
            pr.beginTransaction();
            for (int i = 5; i < 10; i++) pr.send(new ProducerRecord<>(topic, 0, "k", "c-" + i));
            pr.commitTransaction();
            out("STEP", "commit2");
        }
        out("TXN", "done");
    }

    // seek TOPIC: 10 records with timestamps T0 + i s; offsetsForTimes,
    // seek, seekToBeginning/End, beginning/endOffsets
    static void seek(String topic) throws Exception {
        createTopic(topic, 1);
        long t0 = System.currentTimeMillis() - 3_600_000L;
        try (KafkaProducer<String, String> pr =
                 new KafkaProducer<>(producerProps("all", "none", true))) {
            for (int i = 0; i < 10; i++) {
                pr.send(new ProducerRecord<>(topic, 0, t0 + i * 1000L, "k", "v" + i));
            }
            pr.flush();
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> c =
                 new KafkaConsumer<>(consumerProps(null, null, "read_uncommitted"))) {
            c.assign(List.of(tp));
            out("BEGIN", c.beginningOffsets(List.of(tp)).get(tp));
            out("END", c.endOffsets(List.of(tp)).get(tp));
            OffsetAndTimestamp ot = c.offsetsForTimes(Map.of(tp, t0 + 4500L)).get(tp);
            out("OFT", ot == null ? -1 : ot.offset(), ot == null ? -1 : ot.timestamp() - t0);
            OffsetAndTimestamp late = c.offsetsForTimes(Map.of(tp, t0 + 60_000L)).get(tp);
            out("OFT_LATE", late == null ? "null" : String.valueOf(late.offset()));
            c.seek(tp, 7);
            List<ConsumerRecord<String, String>> r = drain(c, 3, ms(10000));
            out("SEEK7", r.stream().map(ConsumerRecord::value).collect(Collectors.joining(",")));
            c.seekToBeginning(List.of(tp));
            out("POS_BEGIN", c.position(tp));
            c.seekToEnd(List.of(tp));
            out("POS_END", c.position(tp));
            if (ot != null) {
                c.seek(tp, ot.offset());
                r = drain(c, 1, ms(10000));
                out("AT_TIME", r.isEmpty() ? "none" : r.get(0).value(),
                    r.isEmpty() ? -1 : r.get(0).timestamp() - t0);
            }
        }
    }

    // group TOPIC(4 partitions) GROUP PROTOCOL ASSIGNOR STATIC: two members
    // split the topic; with STATIC the second is replaced by a third with
    // its instance id and takes over its partitions without a rebalance
    static class Member implements Runnable {
        final String name;
        final KafkaConsumer<String, String> c;
        final AtomicReference<Set<Integer>> assigned = new AtomicReference<>(Set.of());
        final List<String> events = Collections.synchronizedList(new ArrayList<>());
        volatile boolean stop;
        volatile Throwable err;
        final Thread t;
        final String topic;

        Member(String name, String topic, Properties p) {
            this.name = name;
            this.topic = topic;
            this.c = new KafkaConsumer<>(p);
            this.t = new Thread(this, name);
        }

        static String fmt(Collection<TopicPartition> ps) {
            return ps.stream().map(TopicPartition::partition).sorted()
                .map(String::valueOf).collect(Collectors.joining(","));
        }

        public void run() {
            try {
                c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                    public void onPartitionsRevoked(Collection<TopicPartition> ps) {
                        if (!ps.isEmpty()) events.add("revoked:" + fmt(ps));
                    }
                    public void onPartitionsAssigned(Collection<TopicPartition> ps) {
                        if (!ps.isEmpty()) events.add("assigned:" + fmt(ps));
                    }
                    public void onPartitionsLost(Collection<TopicPartition> ps) {
                        if (!ps.isEmpty()) events.add("lost:" + fmt(ps));
                    }
                });
                while (!stop) {
                    c.poll(Duration.ofMillis(100));
                    assigned.set(c.assignment().stream().map(TopicPartition::partition)
                                 .collect(Collectors.toCollection(TreeSet::new)));
                }
            } catch (org.apache.kafka.common.errors.WakeupException e) {
                if (!stop) err = e;
            } catch (Throwable e) {
                err = e;
            } finally {
                c.close(Duration.ofSeconds(5));
            }
        }

        void halt() throws InterruptedException {
            stop = true;
            c.wakeup();
            t.join(ms(15000));
        }
    }

    static boolean split(int parts, Member... ms) {
        Set<Integer> all = new TreeSet<>();
        int sum = 0;
        for (Member m : ms) {
            Set<Integer> a = m.assigned.get();
            if (a.isEmpty()) return false;
            all.addAll(a);
            sum += a.size();
        }
        return all.size() == parts && sum == parts;
    }

    static boolean waitSplit(int parts, long ms, Member... m) throws InterruptedException {
        long end = System.currentTimeMillis() + ms;
        while (System.currentTimeMillis() < end) {
            if (split(parts, m)) {
                Thread.sleep(1500);         // and it stays so
                if (split(parts, m)) return true;
            }
            Thread.sleep(100);
        }
        return false;
    }

    static void group(String topic, String group, String protocol, String assignor,
                      boolean isStatic) throws Exception {
        createTopic(topic, 4);
        Function3 props = (inst) -> {
            Properties p = consumerProps(group, protocol, "read_uncommitted");
            if (protocol.equals("classic")) {
                p.put("session.timeout.ms", String.valueOf(ms(10000)));
                p.put("heartbeat.interval.ms", "500");
                if (assignor.equals("cooperative")) {
                    p.put("partition.assignment.strategy",
                          CooperativeStickyAssignor.class.getName());
                } else if (assignor.equals("range")) {
                    p.put("partition.assignment.strategy", RangeAssignor.class.getName());
                }
            } else if (!assignor.equals("-")) {
                p.put("group.remote.assignor", assignor);
            }
            if (isStatic) p.put("group.instance.id", inst);
            return p;
        };
        Member m1 = new Member("m1", topic, props.apply("inst-1"));
        m1.t.start();
        boolean ok1 = waitSplit(4, ms(30000), m1);
        out("PHASE1", ok1, "m1=" + m1.assigned.get());
        Member m2 = new Member("m2", topic, props.apply("inst-2"));
        m2.t.start();
        boolean ok2 = waitSplit(4, ms(30000), m1, m2);
        out("PHASE2", ok2, "m1=" + m1.assigned.get(), "m2=" + m2.assigned.get());
        out("EVENTS", "m1", String.join(" ", m1.events));
        out("EVENTS", "m2", String.join(" ", m2.events));
        try (Admin a = admin()) {
            ConsumerGroupDescription d = a.describeConsumerGroups(List.of(group))
                .all().get().get(group);
            out("DESCRIBE", d.groupState(), d.type(), d.members().size(),
                d.members().stream().map(x -> x.groupInstanceId().orElse("-"))
                    .sorted().collect(Collectors.joining(",")));
        } catch (Exception e) {
            out("DESCRIBE_ERR", e.toString().replace('\n', ' '));
        }
        if (isStatic) {
            Set<Integer> had = m2.assigned.get();
            int before = m1.events.size();
            m2.halt();
            Member m3 = new Member("m3", topic, props.apply("inst-2"));
            m3.t.start();
            boolean ok3 = waitSplit(4, ms(30000), m1, m3);
            out("PHASE3", ok3, "m1=" + m1.assigned.get(), "m3=" + m3.assigned.get(),
                "m2had=" + had);
            out("M1_EVENTS_AFTER", String.join(" ", m1.events.subList(before, m1.events.size())));
            m3.halt();
        } else {
            m2.halt();
        }
        m1.halt();
        for (Member m : List.of(m1, m2)) {
            if (m.err != null) out("MEMBER_ERR", m.name, m.err.toString().replace('\n', ' '));
        }
    }

    interface Function3 { Properties apply(String inst); }

    // admin: the Admin calls samsa serves, one OK/ERR line each
    interface Step { String run() throws Exception; }

    static void step(String name, Step s) {
        try {
            out("OK", name, s.run());
        } catch (Throwable e) {
            Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            out("ERR", name, c.toString().replace('\n', ' '));
        }
    }

    static void admin(String pfx) throws Exception {
        String topic = pfx + "-topic", grp = pfx + "-group", txid = pfx + "-txid";
        TopicPartition tp0 = new TopicPartition(topic, 0);
        try (Admin a = admin()) {
            step("createTopics", () -> {
                a.createTopics(List.of(new NewTopic(topic, 3, (short) 1)
                    .configs(Map.of("retention.ms", "3600000")))).all().get();
                return "created";
            });
            step("listTopics", () -> new TreeSet<>(a.listTopics().names().get()).toString());
            step("describeTopics", () -> {
                TopicDescription d = a.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                return d.name() + " partitions=" + d.partitions().size() + " leader="
                    + d.partitions().get(0).leader().id() + " id=" + d.topicId();
            });
            String[] nodeId = {"1"};
            step("describeCluster", () -> {
                DescribeClusterResult r = a.describeCluster();
                Collection<Node> nodes = r.nodes().get();
                nodeId[0] = String.valueOf(nodes.iterator().next().id());
                return "nodes=" + nodes.size() + " node=" + nodeId[0] + " controller="
                    + r.controller().get().id() + " cluster=" + r.clusterId().get();
            });
            ConfigResource tr = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            step("describeConfigs.topic", () -> {
                Config c = a.describeConfigs(List.of(tr)).all().get().get(tr);
                ConfigEntry e = c.get("retention.ms");
                return "retention.ms=" + e.value() + " source=" + e.source()
                    + " entries=" + c.entries().size();
            });
            step("describeConfigs.broker", () -> {
                ConfigResource br = new ConfigResource(ConfigResource.Type.BROKER, nodeId[0]);
                Config c = a.describeConfigs(List.of(br)).all().get().get(br);
                ConfigEntry e = c.get("num.partitions");
                return "num.partitions=" + (e == null ? "null" : e.value())
                    + " entries=" + c.entries().size();
            });
            step("incrementalAlterConfigs", () -> {
                a.incrementalAlterConfigs(Map.of(tr, List.of(new AlterConfigOp(
                    new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET))))
                    .all().get();
                return "retention.ms="
                    + a.describeConfigs(List.of(tr)).all().get().get(tr).get("retention.ms").value();
            });
            step("createPartitions", () -> {
                a.createPartitions(Map.of(topic, NewPartitions.increaseTo(5))).all().get();
                return "partitions=" + a.describeTopics(List.of(topic)).allTopicNames().get()
                    .get(topic).partitions().size();
            });
            step("produce", () -> {
                try (KafkaProducer<String, String> pr =
                         new KafkaProducer<>(producerProps("all", "none", true))) {
                    for (int i = 0; i < 10; i++) pr.send(new ProducerRecord<>(topic, 0, "k", "v" + i));
                    pr.flush();
                }
                return "10";
            });
            step("listOffsets", () -> {
                long lat = a.listOffsets(Map.of(tp0, OffsetSpec.latest())).all().get().get(tp0).offset();
                long ear = a.listOffsets(Map.of(tp0, OffsetSpec.earliest())).all().get().get(tp0).offset();
                long max = a.listOffsets(Map.of(tp0, OffsetSpec.maxTimestamp())).all().get().get(tp0).offset();
                return "earliest=" + ear + " latest=" + lat + " maxTimestamp=" + max;
            });
            step("deleteRecords", () -> {
                long low = a.deleteRecords(Map.of(tp0, RecordsToDelete.beforeOffset(4)))
                    .lowWatermarks().get(tp0).get().lowWatermark();
                long ear = a.listOffsets(Map.of(tp0, OffsetSpec.earliest())).all().get().get(tp0).offset();
                return "lowWatermark=" + low + " earliest=" + ear;
            });
            step("describeLogDirs", () -> {
                Map<String, LogDirDescription> m = a.describeLogDirs(List.of(Integer.parseInt(nodeId[0])))
                    .allDescriptions().get().get(Integer.parseInt(nodeId[0]));
                StringBuilder sb = new StringBuilder("dirs=" + m.size());
                for (LogDirDescription d : m.values()) {
                    ReplicaInfo ri = d.replicaInfos().get(tp0);
                    if (ri != null) sb.append(" p0size=").append(ri.size());
                }
                return sb.toString();
            });
            step("describeProducers", () -> {
                List<ProducerState> ps = a.describeProducers(List.of(tp0)).all().get()
                    .get(tp0).activeProducers();
                return "producers=" + ps.size() + (ps.isEmpty() ? "" :
                    " lastSequence=" + ps.get(0).lastSequence());
            });
            step("commitOffsets", () -> {
                try (KafkaConsumer<String, String> c =
                         new KafkaConsumer<>(consumerProps(grp, "classic", "read_uncommitted"))) {
                    c.assign(List.of(tp0));
                    c.commitSync(Map.of(tp0, new OffsetAndMetadata(7, "meta")));
                }
                return "7";
            });
            step("listConsumerGroups", () -> a.listConsumerGroups().all().get().stream()
                 .map(g -> g.groupId()).sorted().collect(Collectors.toList()).toString());
            step("describeConsumerGroups", () -> {
                ConsumerGroupDescription d = a.describeConsumerGroups(List.of(grp)).all().get().get(grp);
                return "state=" + d.groupState() + " members=" + d.members().size()
                    + " type=" + d.type();
            });
            step("listConsumerGroupOffsets", () -> {
                OffsetAndMetadata o = a.listConsumerGroupOffsets(grp).partitionsToOffsetAndMetadata()
                    .get().get(tp0);
                return "p0=" + o.offset() + " metadata=" + o.metadata();
            });
            step("alterConsumerGroupOffsets", () -> {
                a.alterConsumerGroupOffsets(grp, Map.of(tp0, new OffsetAndMetadata(3))).all().get();
                return "p0=" + a.listConsumerGroupOffsets(grp).partitionsToOffsetAndMetadata()
                    .get().get(tp0).offset();
            });
            step("deleteConsumerGroupOffsets", () -> {
                TopicPartition tp1 = new TopicPartition(topic, 1);
                a.alterConsumerGroupOffsets(grp, Map.of(tp1, new OffsetAndMetadata(0))).all().get();
                a.deleteConsumerGroupOffsets(grp, Set.of(tp1)).all().get();
                return "left=" + new TreeSet<>(a.listConsumerGroupOffsets(grp)
                    .partitionsToOffsetAndMetadata().get().keySet().stream()
                    .map(TopicPartition::partition).collect(Collectors.toList()));
            });
            step("listConsumerGroups.inStates", () -> a.listConsumerGroups(
                    new ListConsumerGroupsOptions().inGroupStates(Set.of(GroupState.EMPTY)))
                 .all().get().stream().map(g -> g.groupId() + ":" + g.groupState().orElse(null))
                 .filter(x -> x.startsWith(grp)).collect(Collectors.joining(",")));
            step("listGroups", () -> a.listGroups().all().get().stream()
                 .filter(g -> g.groupId().equals(grp))
                 .map(g -> g.groupId() + ":" + g.type().orElse(null) + ":" + g.protocol())
                 .collect(Collectors.joining(",")));
            step("deleteConsumerGroups", () -> {
                a.deleteConsumerGroups(List.of(grp)).all().get();
                return "listed=" + a.listConsumerGroups().all().get().stream()
                    .anyMatch(g -> g.groupId().equals(grp));
            });
            step("alterClientQuotas", () -> {
                org.apache.kafka.common.quota.ClientQuotaEntity ent =
                    new org.apache.kafka.common.quota.ClientQuotaEntity(Map.of("client-id", pfx + "-client"));
                a.alterClientQuotas(List.of(new org.apache.kafka.common.quota.ClientQuotaAlteration(ent,
                    List.of(new org.apache.kafka.common.quota.ClientQuotaAlteration.Op(
                        "producer_byte_rate", 1048576.0))))).all().get();
                return "set";
            });
            step("describeClientQuotas", () -> {
                Map<org.apache.kafka.common.quota.ClientQuotaEntity, Map<String, Double>> m =
                    a.describeClientQuotas(org.apache.kafka.common.quota.ClientQuotaFilter.containsOnly(
                        List.of(org.apache.kafka.common.quota.ClientQuotaFilterComponent.ofEntity(
                            "client-id", pfx + "-client")))).entities().get();
                return m.entrySet().stream().map(e -> e.getKey().entries() + "=" + e.getValue())
                    .collect(Collectors.joining(","));
            });
            step("transaction", () -> {
                Properties p = producerProps("all", "none", true);
                p.put("transactional.id", txid);
                try (KafkaProducer<String, String> pr = new KafkaProducer<>(p)) {
                    pr.initTransactions();
                    pr.beginTransaction();
                    pr.send(new ProducerRecord<>(topic, 1, "k", "t"));
                    pr.commitTransaction();
                }
                return "committed";
            });
            step("listTransactions", () -> a.listTransactions().all().get().stream()
                 .filter(t -> t.transactionalId().equals(txid))
                 .map(t -> t.transactionalId() + ":" + t.state())
                 .collect(Collectors.joining(",")));
            step("fenceProducers", () -> {
                a.fenceProducers(List.of(txid)).all().get();
                return "fenced " + a.listTransactions().all().get().stream()
                    .filter(t -> t.transactionalId().equals(txid))
                    .map(t -> "state=" + t.state()).collect(Collectors.joining(","));
            });
            step("deleteTopics", () -> {
                a.deleteTopics(List.of(topic)).all().get();
                return "listed=" + a.listTopics().names().get().contains(topic);
            });
            // last: a bad answer here kills the admin client's thread
            step("describeTransactions", () -> {
                TransactionDescription d = a.describeTransactions(List.of(txid)).all().get().get(txid);
                return "state=" + d.state() + " producerId=" + d.producerId()
                    + " epoch=" + d.producerEpoch() + " timeout=" + d.transactionTimeoutMs()
                    + " partitions=" + d.topicPartitions().size();
            });
        }
    }

    // extra TOPIC-PREFIX: more of the client, one OK/ERR line each
    static void extra(String pfx) throws Exception {
        String topic = pfx + "-topic", out = pfx + "-out", grp = pfx + "-group";
        TopicPartition tp0 = new TopicPartition(topic, 0);
        try (Admin a = admin()) {
            step("create", () -> {
                a.createTopics(List.of(new NewTopic(topic, 1, (short) 1),
                                       new NewTopic(out, 1, (short) 1))).all().get();
                return "ok";
            });
            step("headersAndNulls", () -> {
                try (KafkaProducer<String, String> pr =
                         new KafkaProducer<>(producerProps("all", "zstd", true))) {
                    ProducerRecord<String, String> r1 = new ProducerRecord<>(topic, 0, null, "nokey");
                    r1.headers().add("h1", "v1".getBytes()).add("h2", null);
                    pr.send(r1);
                    pr.send(new ProducerRecord<>(topic, 0, "k", null));
                    pr.send(new ProducerRecord<>(topic, 0, "", ""));
                    pr.flush();
                }
                try (KafkaConsumer<String, String> c =
                         new KafkaConsumer<>(consumerProps(null, null, "read_uncommitted"))) {
                    c.assign(List.of(tp0));
                    List<ConsumerRecord<String, String>> got = drain(c, 3, ms(10000));
                    return got.stream().map(r -> r.key() + "|" + r.value() + "|"
                        + Arrays.stream(r.headers().toArray()).map(h -> h.key() + "="
                            + (h.value() == null ? "null" : new String(h.value())))
                            .collect(Collectors.joining(";")))
                        .collect(Collectors.joining(","));
                }
            });
            step("describeTopicsById", () -> {
                Uuid id = a.describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
                TopicDescription d = a.describeTopics(TopicCollection.ofTopicIds(List.of(id)))
                    .allTopicIds().get().get(id);
                return d.name() + " partitions=" + d.partitions().size();
            });
            step("describeFeatures", () -> {
                FeatureMetadata f = a.describeFeatures().featureMetadata().get();
                return "finalized=" + new TreeSet<>(f.finalizedFeatures().keySet())
                    + " supported=" + new TreeSet<>(f.supportedFeatures().keySet());
            });
            step("listOffsetsByTime", () -> {
                long ts = System.currentTimeMillis() + 3_600_000L;
                long future = a.listOffsets(Map.of(tp0, OffsetSpec.forTimestamp(ts))).all().get()
                    .get(tp0).offset();
                long zero = a.listOffsets(Map.of(tp0, OffsetSpec.forTimestamp(0))).all().get()
                    .get(tp0).offset();
                return "future=" + future + " zero=" + zero;
            });
            step("consumeTransformProduce", () -> {
                Properties pp = producerProps("all", "none", true);
                pp.put("transactional.id", pfx + "-ctp");
                Properties cp = consumerProps(grp, "classic", "read_committed");
                cp.put("session.timeout.ms", String.valueOf(ms(10000)));
                try (KafkaProducer<String, String> pr = new KafkaProducer<>(pp);
                     KafkaConsumer<String, String> c = new KafkaConsumer<>(cp)) {
                    pr.initTransactions();
                    c.subscribe(List.of(topic));
                    List<ConsumerRecord<String, String>> got = drain(c, 3, ms(20000));
                    pr.beginTransaction();
                    for (ConsumerRecord<String, String> r : got) {
                        pr.send(new ProducerRecord<>(out, 0, r.key(), "copy-" + r.value()));
                    }
                    pr.sendOffsetsToTransaction(Map.of(tp0, new OffsetAndMetadata(got.size())),
                                                c.groupMetadata());
                    pr.commitTransaction();
                    OffsetAndMetadata com = c.committed(Set.of(tp0)).get(tp0);
                    return "read=" + got.size() + " committed=" + (com == null ? -1 : com.offset());
                }
            });
            step("readCommittedBlocksOnOpenTxn", () -> {
                Properties pp = producerProps("all", "none", true);
                pp.put("transactional.id", pfx + "-open");
                TopicPartition o0 = new TopicPartition(out, 0);
                try (KafkaProducer<String, String> pr = new KafkaProducer<>(pp);
                     KafkaConsumer<String, String> c =
                         new KafkaConsumer<>(consumerProps(null, null, "read_committed"))) {
                    pr.initTransactions();
                    pr.beginTransaction();
                    pr.send(new ProducerRecord<>(out, 0, "k", "open"));
                    pr.flush();
                    c.assign(List.of(o0));
                    c.seekToBeginning(List.of(o0));
                    List<ConsumerRecord<String, String>> before = drain(c, 99, ms(2000));
                    long lso = a.listOffsets(Map.of(o0, OffsetSpec.latest()),
                        new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all().get().get(o0).offset();
                    long hw = a.listOffsets(Map.of(o0, OffsetSpec.latest())).all().get().get(o0).offset();
                    pr.commitTransaction();
                    List<ConsumerRecord<String, String>> after = drain(c, 1, ms(10000));
                    return "before=" + before.stream().map(ConsumerRecord::value).collect(Collectors.toList())
                        + " lso=" + lso + " hw=" + hw + " after="
                        + after.stream().map(ConsumerRecord::value).collect(Collectors.toList());
                }
            });
            step("removeMembers", () -> {
                Properties cp = consumerProps(pfx + "-rm", "classic", "read_uncommitted");
                cp.put("group.instance.id", "rm-1");
                cp.put("session.timeout.ms", String.valueOf(ms(30000)));
                try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp)) {
                    c.subscribe(List.of(topic));
                    long end = System.currentTimeMillis() + ms(20000);
                    while (c.assignment().isEmpty() && System.currentTimeMillis() < end) {
                        c.poll(Duration.ofMillis(100));
                    }
                    a.removeMembersFromConsumerGroup(pfx + "-rm", new RemoveMembersFromConsumerGroupOptions(
                        List.of(new MemberToRemove("rm-1")))).all().get();
                    ConsumerGroupDescription d = a.describeConsumerGroups(List.of(pfx + "-rm")).all().get()
                        .get(pfx + "-rm");
                    return "members=" + d.members().size() + " state=" + d.groupState();
                }
            });
            step("describeConfigsDoc", () -> {
                ConfigResource tr = new ConfigResource(ConfigResource.Type.TOPIC, topic);
                Config c = a.describeConfigs(List.of(tr), new DescribeConfigsOptions()
                    .includeSynonyms(true).includeDocumentation(true)).all().get().get(tr);
                ConfigEntry e = c.get("segment.bytes");
                return "value=" + e.value() + " type=" + e.type() + " doc=" + (e.documentation() != null
                    && !e.documentation().isEmpty()) + " synonyms=" + e.synonyms().size();
            });
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        boot = args[1];
        switch (mode) {
        case "produce":
            produce(args[2], Integer.parseInt(args[3]), args[4], args[5],
                    Boolean.parseBoolean(args[6]));
            break;
        case "consume":
            consume(args[2], Integer.parseInt(args[3]), args[4], args[5], args[6]);
            break;
        case "roundtrip":
            roundtrip(args[2], Integer.parseInt(args[3]), args[4], args[5],
                      Boolean.parseBoolean(args[6]));
            break;
        case "txn":
            txn(args[2], args[3]);
            break;
        case "seek":
            seek(args[2]);
            break;
        case "group":
            group(args[2], args[3], args[4], args[5], Boolean.parseBoolean(args[6]));
            break;
        case "admin":
            admin(args[2]);
            break;
        case "extra":
            extra(args[2]);
            break;
        default:
            throw new IllegalArgumentException("unknown mode " + mode);
        }
        out("EXIT", 0);
        System.exit(0);
    }
}
