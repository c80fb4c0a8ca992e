package io.strata.jvm;

import static io.strata.jvm.Clients.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.InvalidUpdateVersionException;
import org.apache.kafka.common.errors.SecurityDisabledException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.TransactionalIdNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every {@link Admin} method against strata, each with its outcome: as on a single-node Kafka, or the error Kafka's
 * client reports for what strata does not serve (the README's "Kafka's Java client (Admin)" table).
 */
class AdminTest {
  @RegisterExtension static Strata strata = new Strata();
  static Admin admin;

  @BeforeAll
  static void open() {
    admin = Admin.create(strata.props());
  }

  @AfterAll
  static void close() {
    if (admin != null) admin.close();
  }

  static <T> T ok(KafkaFuture<T> f) throws Exception {
    return f.get(30, TimeUnit.SECONDS);
  }

  static Throwable fails(KafkaFuture<?> f) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
    return e.getCause();
  }

  static void unsupported(KafkaFuture<?> f) {
    Throwable e = fails(f);
    assertInstanceOf(UnsupportedVersionException.class, e, String.valueOf(e));
  }

  static String topic(int partitions) throws Exception {
    String t = unique("admin");
    Clients.createTopic(strata, t, partitions, Map.of());
    return t;
  }

  /** A minute ago: record timestamps of {@link #produce}, well within retention. */
  static final long T0 = System.currentTimeMillis() - 60_000;

  /** Produces {@code n} records to partition 0, record i with timestamp T0 + i. */
  static void produce(String topic, int n) {
    try (KafkaProducer<String, String> p = Clients.producer(strata, Map.of())) {
      for (int i = 0; i < n; i++) p.send(new ProducerRecord<>(topic, 0, T0 + i, "k", "v" + i));
      p.flush();
    }
  }

  // --- Cluster -------------------------------------------------------------------------------------------------

  @Test
  void describeCluster() throws Exception {
    DescribeClusterResult d = admin.describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(true));
    assertEquals(1, ok(d.nodes()).size());
    assertEquals(1, ok(d.controller()).id());
    assertNotNull(ok(d.clusterId()));
    // No authorizer: every cluster operation is allowed, as Kafka reports it.
    assertTrue(ok(d.authorizedOperations()).containsAll(Set.of(AclOperation.CREATE, AclOperation.ALTER,
        AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE)));
  }

  @Test
  void describeFeatures() throws Exception {
    // What a single-node Kafka 4.4 finalizes of the features strata implements; none of the others (KRaft's
    // metadata.version, share and streams groups, ELR).
    FeatureMetadata f = ok(admin.describeFeatures().featureMetadata());
    assertEquals(Set.of("transaction.version", "group.version"), f.finalizedFeatures().keySet());
    assertEquals(2, f.finalizedFeatures().get("transaction.version").maxVersionLevel());
    assertEquals(1, f.finalizedFeatures().get("group.version").maxVersionLevel());
    assertEquals(2, f.supportedFeatures().get("transaction.version").maxVersion());
    assertEquals(0, f.supportedFeatures().get("transaction.version").minVersion());
    assertTrue(f.finalizedFeaturesEpoch().isPresent());
  }

  @Test
  void updateFeatures() throws Exception {
    // As Kafka: the current level again is accepted; a level strata does not support, or a lower one asked as an
    // upgrade, is INVALID_UPDATE_VERSION and changes nothing.
    ok(admin.updateFeatures(Map.of("transaction.version",
        new FeatureUpdate((short) 2, FeatureUpdate.UpgradeType.UPGRADE)), new UpdateFeaturesOptions()).all());
    Throwable e = fails(admin.updateFeatures(Map.of("transaction.version",
        new FeatureUpdate((short) 3, FeatureUpdate.UpgradeType.UPGRADE)), new UpdateFeaturesOptions()).all());
    assertTrue(e instanceof InvalidUpdateVersionException, e.toString());
    e = fails(admin.updateFeatures(Map.of("transaction.version",
        new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.UPGRADE)), new UpdateFeaturesOptions()).all());
    assertTrue(e instanceof InvalidUpdateVersionException, e.toString());
    e = fails(admin.updateFeatures(Map.of("metadata.version",
        new FeatureUpdate((short) 20, FeatureUpdate.UpgradeType.UPGRADE)), new UpdateFeaturesOptions()).all());
    assertTrue(e instanceof InvalidUpdateVersionException, e.toString());
    // validateOnly changes nothing.
    ok(admin.updateFeatures(Map.of("transaction.version",
            new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)),
        new UpdateFeaturesOptions().validateOnly(true)).all());
    assertEquals(2, ok(admin.describeFeatures().featureMetadata()).finalizedFeatures()
        .get("transaction.version").maxVersionLevel());
  }

  @Test
  void describeMetadataQuorum() {
    unsupported(admin.describeMetadataQuorum().quorumInfo());
  }

  @Test
  void addRaftVoter() {
    unsupported(admin.addRaftVoter(2, Uuid.randomUuid(),
        Set.of(new RaftVoterEndpoint("CONTROLLER", "127.0.0.1", 9999))).all());
  }

  @Test
  void removeRaftVoter() {
    unsupported(admin.removeRaftVoter(2, Uuid.randomUuid()).all());
  }

  @Test
  void unregisterBroker() {
    unsupported(admin.unregisterBroker(2).all());
  }

  @Test
  void unregisterController() {
    unsupported(admin.unregisterController(2).all());
  }

  @Test
  void metrics() {
    assertFalse(admin.metrics().isEmpty());
  }

  @Test
  void clientInstanceId() {
    // Client-side: the Admin does not push metrics unless enable.metrics.push=true (as with Kafka).
    assertThrows(IllegalStateException.class, () -> admin.clientInstanceId(Duration.ofSeconds(5)));
  }

  // --- Topics --------------------------------------------------------------------------------------------------

  @Test
  void createTopics() throws Exception {
    String t = unique("admin-create");
    CreateTopicsResult r = admin.createTopics(List.of(new NewTopic(t, 3, (short) 1)
        .configs(Map.of("cleanup.policy", "compact"))));
    ok(r.all());
    assertEquals(3, ok(r.numPartitions(t)));
    assertEquals("compact", ok(r.config(t)).get("cleanup.policy").value());
    assertInstanceOf(TopicExistsException.class,
        fails(admin.createTopics(List.of(new NewTopic(t, 1, (short) 1))).all()));
    // validateOnly creates nothing.
    String v = unique("admin-validate");
    ok(admin.createTopics(List.of(new NewTopic(v, 1, (short) 1)), new CreateTopicsOptions().validateOnly(true)).all());
    assertFalse(ok(admin.listTopics().names()).contains(v));
  }

  @Test
  void listTopics() throws Exception {
    String t = topic(1);
    Set<String> names = ok(admin.listTopics().names());
    assertTrue(names.contains(t));
    assertFalse(names.contains("__consumer_offsets"), "internal topics are listed only on request");
    assertTrue(ok(admin.listTopics(new ListTopicsOptions().listInternal(true)).names()).contains("__consumer_offsets"));
  }

  @Test
  void describeTopics() throws Exception {
    String t = topic(2);
    TopicDescription d = ok(admin.describeTopics(List.of(t),
        new DescribeTopicsOptions().includeAuthorizedOperations(true)).allTopicNames()).get(t);
    assertEquals(2, d.partitions().size());
    assertEquals(1, d.partitions().get(0).leader().id());
    assertEquals(1, d.partitions().get(0).isr().size());
    assertFalse(Uuid.ZERO_UUID.equals(d.topicId()), "describeTopics gives the topic id");
    // By id.
    TopicDescription byId = ok(admin.describeTopics(TopicCollection.ofTopicIds(List.of(d.topicId())))
        .allTopicIds()).get(d.topicId());
    assertEquals(t, byId.name());
    assertInstanceOf(UnknownTopicOrPartitionException.class,
        fails(admin.describeTopics(List.of(unique("missing"))).allTopicNames()));
  }

  /**
   * describeTopics by name goes through DescribeTopicPartitions (KIP-966) when the broker advertises it: the client
   * pages with the cursor (here two partitions a response), and each partition carries empty ELR lists, not the
   * null ones of the Metadata fallback.
   */
  @Test
  void describeTopicsPagesThroughDescribeTopicPartitions() throws Exception {
    String t = topic(5);
    String other = topic(1);
    Map<String, TopicDescription> d = ok(admin.describeTopics(List.of(t, other),
        new DescribeTopicsOptions().partitionSizeLimitPerResponse(2).includeAuthorizedOperations(true))
        .allTopicNames());
    TopicDescription desc = d.get(t);
    assertEquals(List.of(0, 1, 2, 3, 4),
        desc.partitions().stream().map(TopicPartitionInfo::partition).toList(), desc.toString());
    assertEquals(1, d.get(other).partitions().size());
    for (TopicPartitionInfo p : desc.partitions()) {
      assertEquals(1, p.leader().id(), p.toString());
      assertEquals(List.of(1), p.replicas().stream().map(Node::id).toList(), p.toString());
      assertEquals(List.of(1), p.isr().stream().map(Node::id).toList(), p.toString());
      assertEquals(List.of(), p.elr(), "empty ELR from DescribeTopicPartitions: " + p);
      assertEquals(List.of(), p.lastKnownElr(), p.toString());
    }
    assertTrue(desc.authorizedOperations().contains(AclOperation.DESCRIBE), desc.toString());
    assertInstanceOf(UnknownTopicOrPartitionException.class,
        fails(admin.describeTopics(List.of(unique("missing")),
            new DescribeTopicsOptions().partitionSizeLimitPerResponse(1)).allTopicNames()));
  }

  @Test
  void createPartitions() throws Exception {
    String t = topic(1);
    ok(admin.createPartitions(Map.of(t, NewPartitions.increaseTo(3))).all());
    assertEquals(3, ok(admin.describeTopics(List.of(t)).allTopicNames()).get(t).partitions().size());
    assertInstanceOf(org.apache.kafka.common.errors.InvalidPartitionsException.class,
        fails(admin.createPartitions(Map.of(t, NewPartitions.increaseTo(2))).all()));
  }

  @Test
  void deleteTopics() throws Exception {
    String t = topic(1);
    ok(admin.deleteTopics(List.of(t)).all());
    Clients.await("topic gone", null, () -> {
      try {
        return !ok(admin.listTopics().names()).contains(t);
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    });
    assertInstanceOf(UnknownTopicOrPartitionException.class, fails(admin.deleteTopics(List.of(t)).all()));
  }

  @Test
  void describeConfigs() throws Exception {
    String t = topic(1);
    ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, t);
    ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");
    Map<ConfigResource, Config> m = ok(admin.describeConfigs(List.of(topic, broker)).all());
    assertEquals("delete", m.get(topic).get("cleanup.policy").value());
    assertNotNull(m.get(broker).get("log.segment.bytes"));
    // Loggers (log4j on Kafka) are not described: strata logs with tracing (RUST_LOG).
    assertInstanceOf(InvalidRequestException.class, fails(admin.describeConfigs(
        List.of(new ConfigResource(ConfigResource.Type.BROKER_LOGGER, "1"))).all()));
  }

  @Test
  void incrementalAlterConfigs() throws Exception {
    String t = topic(1);
    ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, t);
    ok(admin.incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "123456"),
        AlterConfigOp.OpType.SET)))).all());
    assertEquals("123456", ok(admin.describeConfigs(List.of(r)).all()).get(r).get("retention.ms").value());
    assertInstanceOf(org.apache.kafka.common.errors.InvalidConfigurationException.class,
        fails(admin.incrementalAlterConfigs(Map.of(r, List.of(new AlterConfigOp(
            new ConfigEntry("retention.ms", "not-a-number"), AlterConfigOp.OpType.SET)))).all()));
  }

  @Test
  void listConfigResources() {
    unsupported(admin.listConfigResources().all());
  }

  @Test
  @SuppressWarnings("deprecation")
  void listClientMetricsResources() {
    unsupported(admin.listClientMetricsResources().all());
  }

  // --- Partitions, offsets, log dirs ---------------------------------------------------------------------------

  @Test
  void listOffsets() throws Exception {
    String t = topic(1);
    produce(t, 5);
    TopicPartition tp = new TopicPartition(t, 0);
    assertEquals(5L, ok(admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all()).get(tp).offset());
    assertEquals(0L, ok(admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all()).get(tp).offset());
    assertEquals(4L, ok(admin.listOffsets(Map.of(tp, OffsetSpec.maxTimestamp())).all()).get(tp).offset());
    assertEquals(2L, ok(admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(T0 + 2))).all()).get(tp).offset());
  }

  @Test
  void deleteRecords() throws Exception {
    String t = topic(1);
    produce(t, 5);
    TopicPartition tp = new TopicPartition(t, 0);
    assertEquals(3L, ok(admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(3))).lowWatermarks().get(tp))
        .lowWatermark());
    assertEquals(3L, ok(admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all()).get(tp).offset());
    assertInstanceOf(org.apache.kafka.common.errors.OffsetOutOfRangeException.class,
        fails(admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(99))).all()));
  }

  @Test
  void describeLogDirs() throws Exception {
    String t = topic(1);
    Map<String, LogDirDescription> dirs = ok(admin.describeLogDirs(List.of(1)).allDescriptions()).get(1);
    assertEquals(1, dirs.size());
    LogDirDescription d = dirs.values().iterator().next();
    assertTrue(d.replicaInfos().containsKey(new TopicPartition(t, 0)));
    assertTrue(d.totalBytes().isPresent() && d.usableBytes().isPresent());
  }

  @Test
  void describeReplicaLogDirs() throws Exception {
    String t = topic(1);
    var info = ok(admin.describeReplicaLogDirs(List.of(new TopicPartitionReplica(t, 0, 1))).all())
        .get(new TopicPartitionReplica(t, 0, 1));
    assertNotNull(info.getCurrentReplicaLogDir());
  }

  @Test
  void alterReplicaLogDirs() throws Exception {
    String t = topic(1);
    unsupported(admin.alterReplicaLogDirs(Map.of(new TopicPartitionReplica(t, 0, 1), "/elsewhere")).all());
  }

  @Test
  void electLeaders() throws Exception {
    String t = topic(1);
    TopicPartition tp = new TopicPartition(t, 0);
    for (ElectionType type : ElectionType.values()) {
      Optional<Throwable> e = ok(admin.electLeaders(type, Set.of(tp)).partitions()).get(tp);
      assertInstanceOf(ElectionNotNeededException.class, e.orElse(null), type.toString());
    }
  }

  @Test
  void alterPartitionReassignments() throws Exception {
    // One replica per partition: [this node] is the assignment already (done at once); anything else is refused as
    // Kafka refuses it, and there is never a reassignment to cancel.
    String t = topic(1);
    TopicPartition tp = new TopicPartition(t, 0);
    ok(admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(1))))).all());
    assertInstanceOf(org.apache.kafka.common.errors.InvalidReplicaAssignmentException.class, fails(
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(2))))).all()));
    assertInstanceOf(org.apache.kafka.common.errors.InvalidReplicaAssignmentException.class, fails(
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(1, 1)))))
            .all()));
    assertInstanceOf(org.apache.kafka.common.errors.NoReassignmentInProgressException.class,
        fails(admin.alterPartitionReassignments(Map.of(tp, Optional.empty())).all()));
    assertInstanceOf(UnknownTopicOrPartitionException.class, fails(admin.alterPartitionReassignments(Map.of(
        new TopicPartition(t, 5), Optional.of(new NewPartitionReassignment(List.of(1))))).all()));
  }

  @Test
  void listPartitionReassignments() throws Exception {
    String t = topic(1);
    assertTrue(ok(admin.listPartitionReassignments().reassignments()).isEmpty());
    assertTrue(ok(admin.listPartitionReassignments(Set.of(new TopicPartition(t, 0))).reassignments()).isEmpty());
  }

  // --- Groups --------------------------------------------------------------------------------------------------

  /** A member of {@code group}, static when {@code instance} is given (a static member does not leave on close). */
  static KafkaConsumer<String, String> member(String group, String topic, String instance) {
    Map<String, Object> cfg = new java.util.HashMap<>(Map.of(ConsumerConfig.GROUP_ID_CONFIG, group));
    if (instance != null) cfg.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instance);
    KafkaConsumer<String, String> c = Clients.consumer(strata, cfg);
    c.subscribe(List.of(topic));
    Clients.await("member assigned", c, () -> !c.assignment().isEmpty());
    return c;
  }

  @Test
  void listGroupsAndListConsumerGroups() throws Exception {
    String t = topic(1);
    String g = unique("admin-list");
    try (KafkaConsumer<String, String> c = member(g, t, "i1")) {
      assertTrue(ok(admin.listGroups().all()).stream().anyMatch(l -> l.groupId().equals(g)
          && l.type().equals(Optional.of(GroupType.CLASSIC))));
      @SuppressWarnings("deprecation")
      var consumerGroups = ok(admin.listConsumerGroups().all());
      assertTrue(consumerGroups.stream().anyMatch(l -> l.groupId().equals(g)));
      assertTrue(ok(admin.listGroups(ListGroupsOptions.forConsumerGroups()
          .inGroupStates(Set.of(GroupState.STABLE))).all()).stream().anyMatch(l -> l.groupId().equals(g)));
    }
  }

  @Test
  void describeConsumerGroups() throws Exception {
    String t = topic(1);
    String g = unique("admin-describe");
    try (KafkaConsumer<String, String> c = member(g, t, "i1")) {
      ConsumerGroupDescription d = ok(admin.describeConsumerGroups(List.of(g),
          new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true)).all()).get(g);
      assertEquals(GroupState.STABLE, d.groupState());
      assertEquals(GroupType.CLASSIC, d.type());
      assertEquals(1, d.members().size());
      assertEquals(Set.of(new TopicPartition(t, 0)), d.members().iterator().next().assignment().topicPartitions());
      assertTrue(d.authorizedOperations().containsAll(Set.of(AclOperation.READ, AclOperation.DESCRIBE)));
    }
  }

  @Test
  void describeClassicGroups() throws Exception {
    String t = topic(1);
    String g = unique("admin-classic");
    try (KafkaConsumer<String, String> c = member(g, t, "i1")) {
      ClassicGroupDescription d = ok(admin.describeClassicGroups(List.of(g)).all()).get(g);
      assertEquals("consumer", d.protocol());
      assertEquals(1, d.members().size());
    }
  }

  @Test
  void groupOffsets() throws Exception {
    // alterConsumerGroupOffsets, listConsumerGroupOffsets, deleteConsumerGroupOffsets.
    String t = topic(2);
    produce(t, 3);
    String g = unique("admin-offsets");
    TopicPartition p0 = new TopicPartition(t, 0);
    TopicPartition p1 = new TopicPartition(t, 1);
    ok(admin.alterConsumerGroupOffsets(g, Map.of(p0, new OffsetAndMetadata(2, "m"), p1,
        new OffsetAndMetadata(0))).all());
    Map<TopicPartition, OffsetAndMetadata> got = ok(admin.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata());
    assertEquals(2L, got.get(p0).offset());
    assertEquals("m", got.get(p0).metadata());
    assertEquals(0L, got.get(p1).offset());
    ok(admin.deleteConsumerGroupOffsets(g, Set.of(p1)).all());
    got = ok(admin.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata());
    assertEquals(Set.of(p0), got.keySet());
  }

  @Test
  void removeMembersFromConsumerGroup() throws Exception {
    String t = topic(1);
    String g = unique("admin-remove");
    try (KafkaConsumer<String, String> c = member(g, t, "static-1")) {
      ok(admin.removeMembersFromConsumerGroup(g, new RemoveMembersFromConsumerGroupOptions(
          Set.of(new MemberToRemove("static-1")))).all());
      ConsumerGroupDescription d = ok(admin.describeConsumerGroups(List.of(g)).all()).get(g);
      assertEquals(0, d.members().size());
    }
  }

  @Test
  void deleteConsumerGroups() throws Exception {
    String t = topic(1);
    String g = unique("admin-delete");
    try (KafkaConsumer<String, String> c = member(g, t, null)) {
      c.commitSync();
      assertInstanceOf(GroupNotEmptyException.class, fails(admin.deleteConsumerGroups(List.of(g)).all()));
    }
    ok(admin.deleteConsumerGroups(List.of(g)).all());
    assertInstanceOf(GroupIdNotFoundException.class, fails(admin.deleteConsumerGroups(List.of(g)).all()));
  }

  @Test
  void shareGroups() throws Exception {
    // Share groups (KIP-932) are not served: their APIs are not advertised.
    String t = topic(1);
    unsupported(admin.describeShareGroups(List.of("s1")).all());
    unsupported(admin.listShareGroupOffsets(Map.of("s1", new ListShareGroupOffsetsSpec())).all());
    unsupported(admin.alterShareGroupOffsets("s1", Map.of(new TopicPartition(t, 0), 0L)).all());
    unsupported(admin.deleteShareGroupOffsets("s1", Set.of(t)).all());
    // deleteShareGroups is DeleteGroups: an unknown group.
    assertInstanceOf(GroupIdNotFoundException.class, fails(admin.deleteShareGroups(List.of("s1")).all()));
  }

  @Test
  void streamsGroups() throws Exception {
    // Streams groups (KIP-1071) are not served; their offsets are plain group offsets (OffsetCommit/OffsetFetch).
    String t = topic(1);
    String g = unique("streams");
    TopicPartition tp = new TopicPartition(t, 0);
    unsupported(admin.describeStreamsGroups(List.of(g)).all());
    ok(admin.alterStreamsGroupOffsets(g, Map.of(tp, new OffsetAndMetadata(0))).all());
    assertEquals(0L, ok(admin.listStreamsGroupOffsets(Map.of(g, new ListStreamsGroupOffsetsSpec())).all())
        .get(g).get(tp).offset());
    ok(admin.deleteStreamsGroupOffsets(g, Set.of(tp)).all());
    assertInstanceOf(GroupIdNotFoundException.class, fails(admin.deleteStreamsGroups(List.of(unique("none"))).all()));
  }

  // --- Security ------------------------------------------------------------------------------------------------

  @Test
  void acls() {
    // No authorizer: Kafka's SECURITY_DISABLED.
    AclBinding b = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "t", PatternType.LITERAL),
        new AccessControlEntry("User:a", "*", AclOperation.READ, AclPermissionType.ALLOW));
    assertInstanceOf(SecurityDisabledException.class, fails(admin.describeAcls(AclBindingFilter.ANY).values()));
    assertInstanceOf(SecurityDisabledException.class, fails(admin.createAcls(List.of(b)).all()));
    assertInstanceOf(SecurityDisabledException.class, fails(admin.deleteAcls(List.of(AclBindingFilter.ANY)).all()));
  }

  @Test
  void userScramCredentials() throws Exception {
    String user = unique("alice");
    ok(admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(user,
        new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "secret"))).all());
    UserScramCredentialsDescription d = ok(admin.describeUserScramCredentials(List.of(user)).all()).get(user);
    assertEquals(ScramMechanism.SCRAM_SHA_256, d.credentialInfos().get(0).mechanism());
    assertTrue(ok(admin.describeUserScramCredentials().users()).contains(user));
    ok(admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion(user,
        ScramMechanism.SCRAM_SHA_256))).all());
    assertFalse(ok(admin.describeUserScramCredentials().users()).contains(user));
  }

  @Test
  void delegationTokens() {
    unsupported(admin.createDelegationToken().delegationToken());
    unsupported(admin.describeDelegationToken().delegationTokens());
    unsupported(admin.renewDelegationToken(new byte[8]).expiryTimestamp());
    unsupported(admin.expireDelegationToken(new byte[8]).expiryTimestamp());
  }

  @Test
  void clientQuotas() throws Exception {
    // No client quotas are kept (nothing would enforce them): describe matches nothing, as Kafka with none set;
    // alter is not served.
    assertTrue(ok(admin.describeClientQuotas(ClientQuotaFilter.all()).entities()).isEmpty());
    assertTrue(ok(admin.describeClientQuotas(ClientQuotaFilter.containsOnly(List.of(
        org.apache.kafka.common.quota.ClientQuotaFilterComponent.ofEntity("user", "alice")))).entities()).isEmpty());
    unsupported(admin.alterClientQuotas(List.of(new ClientQuotaAlteration(
        new ClientQuotaEntity(Map.of("client-id", "c1")),
        List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 1024.0))))).all());
  }

  // --- Transactions --------------------------------------------------------------------------------------------

  @Test
  void transactionsListDescribeFenceTerminate() throws Exception {
    String t = topic(1);
    String txId = unique("admin-tx");
    try (KafkaProducer<String, String> p = Clients.producer(strata, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG,
        txId))) {
      p.initTransactions();
      p.beginTransaction();
      p.send(new ProducerRecord<>(t, 0, "k", "v")).get(30, TimeUnit.SECONDS);
      assertTrue(ok(admin.listTransactions().all()).stream().anyMatch(l -> l.transactionalId().equals(txId)
          && l.state() == org.apache.kafka.clients.admin.TransactionState.ONGOING));
      TransactionDescription d = ok(admin.describeTransactions(List.of(txId)).all()).get(txId);
      assertEquals(Set.of(new TopicPartition(t, 0)), d.topicPartitions());
      var producers = ok(admin.describeProducers(List.of(new TopicPartition(t, 0))).all())
          .get(new TopicPartition(t, 0)).activeProducers();
      assertEquals(1, producers.size());
      assertEquals(d.producerId(), producers.get(0).producerId());
      // fenceProducers bumps the epoch (aborting the open transaction).
      ok(admin.fenceProducers(List.of(txId)).all());
      assertThrows(org.apache.kafka.common.errors.ProducerFencedException.class, p::commitTransaction);
      // forceTerminateTransaction (KIP-939) aborts as the fence does.
      ok(admin.forceTerminateTransaction(txId).result());
    }
    assertInstanceOf(TransactionalIdNotFoundException.class,
        fails(admin.describeTransactions(List.of(unique("none"))).all()));
  }

  @Test
  void abortTransaction() throws Exception {
    // A hanging transaction closed by the admin (WriteTxnMarkers to the partition leader), found with
    // describeProducers as kafka-transactions.sh does.
    String t = topic(1);
    TopicPartition tp = new TopicPartition(t, 0);
    KafkaProducer<String, String> p = Clients.producer(strata, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG,
        unique("admin-abort")));
    try {
      p.initTransactions();
      p.beginTransaction();
      p.send(new ProducerRecord<>(t, 0, "k", "v")).get(30, TimeUnit.SECONDS);
      ProducerState st = ok(admin.describeProducers(List.of(tp)).all()).get(tp).activeProducers().get(0);
      assertEquals(0L, st.currentTransactionStartOffset().orElse(-1L));
      ok(admin.abortTransaction(new AbortTransactionSpec(tp, st.producerId(), (short) st.producerEpoch(),
          st.coordinatorEpoch().orElse(0))).all());
      try (KafkaConsumer<String, String> rc = Clients.consumer(strata, Map.of(
          ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"))) {
        assertEquals(2L, rc.endOffsets(List.of(tp)).get(tp), "data + ABORT marker: the LSO is past them");
        rc.assign(List.of(tp));
        assertEquals(0, Clients.pollFor(rc, Duration.ofMillis(500)).size(), "the aborted record is not read");
      }
      ProducerState after = ok(admin.describeProducers(List.of(tp)).all()).get(tp).activeProducers().get(0);
      assertTrue(after.currentTransactionStartOffset().isEmpty(), "no open transaction: " + after);
    } finally {
      p.close(Duration.ZERO);
    }
  }
}
