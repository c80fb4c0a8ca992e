# The client runs whose requests seed the corpora (run from the repository root with a strata broker listening on
# 127.0.0.1:29192, advertised.listeners=PLAINTEXT://127.0.0.1:29193, and fuzz/capture/proxy.py 29193 29192 OUT in
# front of it); then python3 fuzz/capture/seeds.py OUT fuzz/corpus.
set -x
B=127.0.0.1:29193
K="bench/kafka/kafka.sh run"
$K org.apache.kafka.tools.TopicCommand --bootstrap-server $B --create --topic fuzz-a --partitions 3
$K org.apache.kafka.tools.TopicCommand --bootstrap-server $B --create --topic fuzz-lat --config message.timestamp.type=LogAppendTime
$K org.apache.kafka.tools.TopicCommand --bootstrap-server $B --create --topic fuzz-compact --config cleanup.policy=compact
$K org.apache.kafka.tools.TopicCommand --bootstrap-server $B --describe --topic fuzz-a
$K org.apache.kafka.tools.TopicCommand --bootstrap-server $B --alter --topic fuzz-a --partitions 3 || true
for c in none gzip snappy lz4 zstd; do
  seq 1 20 | sed 's/^/k:v/' | kcat -b $B -P -t fuzz-a -z $c -K: -H h1=x -p 0
done
seq 1 5 | kcat -b $B -P -t fuzz-compact -K: -X enable.idempotence=true  <<< $'a:1\nb:2'
printf 'x\ny\n' | kcat -b $B -P -t fuzz-lat -z zstd
kcat -b $B -C -t fuzz-a -p 0 -o beginning -e -q >/dev/null
kcat -b $B -C -t fuzz-a -G fuzz-g -o beginning -e -q -X enable.partition.eof=true 2>/dev/null & KP=$!; sleep 6; kill $KP
kcat -b $B -Q -t fuzz-a:0:1700000000000
kcat -b $B -L -J >/dev/null
$K org.apache.kafka.tools.ConsoleProducer --bootstrap-server $B --topic fuzz-a --producer-property compression.type=lz4 --property parse.key=true <<< $'k1\tv1\nk2\tv2'
$K org.apache.kafka.tools.ConsoleProducer --bootstrap-server $B --topic fuzz-a --producer-property transactional.id=fuzz-tx --producer-property enable.idempotence=true <<< $'t1\nt2' || true
$K org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server $B --topic fuzz-a --from-beginning --max-messages 5 --group fuzz-cg --timeout-ms 8000
$K org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server $B --topic fuzz-a --from-beginning --max-messages 5 --consumer-property group.protocol=consumer --group fuzz-cg2 --timeout-ms 8000
$K org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server $B --describe --all-groups
$K org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server $B --reset-offsets --to-earliest --group fuzz-cg --topic fuzz-a --execute
$K org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server $B --delete-offsets --group fuzz-cg --topic fuzz-a
$K kafka.admin.ConfigCommand --bootstrap-server $B --alter --entity-type topics --entity-name fuzz-a --add-config retention.ms=86400000
$K kafka.admin.ConfigCommand --bootstrap-server $B --describe --entity-type topics --entity-name fuzz-a
$K kafka.admin.ConfigCommand --bootstrap-server $B --describe --entity-type brokers --entity-name 1
$K kafka.admin.ConfigCommand --bootstrap-server $B --alter --add-config 'SCRAM-SHA-256=[password=secret]' --entity-type users --entity-name fuzzuser
$K kafka.admin.ConfigCommand --bootstrap-server $B --describe --entity-type users
$K kafka.admin.ConfigCommand --bootstrap-server $B --describe --entity-type clients
$K org.apache.kafka.tools.AclCommand --bootstrap-server $B --add --allow-principal User:alice --operation Read --topic fuzz-a || true
$K org.apache.kafka.tools.AclCommand --bootstrap-server $B --list || true
$K org.apache.kafka.tools.AclCommand --bootstrap-server $B --remove --allow-principal User:alice --operation Read --topic fuzz-a --force || true
$K org.apache.kafka.tools.TransactionsCommand --bootstrap-server $B list
$K org.apache.kafka.tools.TransactionsCommand --bootstrap-server $B describe --transactional-id fuzz-tx || true
$K org.apache.kafka.tools.TransactionsCommand --bootstrap-server $B describe-producers --topic fuzz-a --partition 0
$K org.apache.kafka.tools.GetOffsetShell --bootstrap-server $B --topic fuzz-a --time -1
$K org.apache.kafka.tools.LogDirsCommand --bootstrap-server $B --describe
$K org.apache.kafka.tools.ClusterTool cluster-id --bootstrap-server $B
$K org.apache.kafka.tools.FeatureCommand --bootstrap-server $B describe
$K org.apache.kafka.tools.LeaderElectionCommand --bootstrap-server $B --election-type preferred --all-topic-partitions || true
echo '{"partitions":[{"topic":"fuzz-a","partition":0,"offset":1}],"version":1}' > /tmp/fuzzcap/dr.json
$K org.apache.kafka.tools.DeleteRecordsCommand --bootstrap-server $B --offset-json-file /tmp/fuzzcap/dr.json
$K org.apache.kafka.tools.reassign.ReassignPartitionsCommand --bootstrap-server $B --list || true
$K org.apache.kafka.tools.ClientMetricsCommand --bootstrap-server $B --list || true
$K org.apache.kafka.tools.consumer.group.ConsumerGroupCommand --bootstrap-server $B --delete --group fuzz-cg
$K org.apache.kafka.tools.TopicCommand --bootstrap-server $B --create --topic fuzz-tmp
$K org.apache.kafka.tools.TopicCommand --bootstrap-server $B --delete --topic fuzz-tmp
timeout 60 $K org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server $B --topic fuzz-a --from-beginning --max-messages 5 --consumer-property group.protocol=classic --group fuzz-classic --timeout-ms 8000
timeout 60 $K org.apache.kafka.tools.ProducerPerformance --topic fuzz-a --num-records 20 --record-size 50 --throughput -1 --producer-props bootstrap.servers=$B compression.type=zstd --transactional-id fuzz-ptx --transaction-duration-ms 100
timeout 60 $K org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server $B --topic fuzz-a --from-beginning --max-messages 5 --consumer-property isolation.level=read_committed --timeout-ms 5000
