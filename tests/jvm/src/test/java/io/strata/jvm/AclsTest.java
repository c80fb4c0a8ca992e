package io.strata.jvm;

import static io.strata.jvm.Clients.unique;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ACLs managed with Kafka 4.4's {@code kafka-acls} tool (AclCommand) and Admin createAcls / describeAcls /
 * deleteAcls against strata with Kafka's StandardAuthorizer switched on (issue 31). The tools connect over
 * PLAINTEXT, as {@code User:ANONYMOUS}, made a super user here.
 */
class AclsTest {
  @RegisterExtension
  static Strata strata = new Strata()
      .with("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
      .with("super.users", "User:ANONYMOUS");

  static final String ACLS = "org.apache.kafka.tools.AclCommand";
  static Admin admin;

  @BeforeAll
  static void open() {
    admin = Admin.create(strata.props());
  }

  @AfterAll
  static void close() {
    if (admin != null) admin.close();
  }

  static Tool.Result acls(String... args) throws Exception {
    String[] all = new String[args.length + 2];
    all[0] = "--bootstrap-server";
    all[1] = strata.bootstrap();
    System.arraycopy(args, 0, all, 2, args.length);
    Tool.Result r = Tool.run(ACLS, null, all);
    assertEquals(0, r.exit(), "kafka-acls " + String.join(" ", args) + "\n" + r);
    return r;
  }

  static Collection<AclBinding> describe(ResourcePatternFilter f) throws Exception {
    return admin.describeAcls(new AclBindingFilter(f, AccessControlEntryFilter.ANY)).values().get(30, TimeUnit.SECONDS);
  }

  @Test
  void kafkaAclsAddListRemove() throws Exception {
    String t = unique("acl-topic");
    String g = unique("acl-group");
    acls("--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Write", "--topic", t);
    acls("--add", "--allow-principal", "User:alice", "--consumer", "--topic", t, "--group", g);
    acls("--add", "--deny-principal", "User:bob", "--operation", "All", "--topic", "pay-",
        "--resource-pattern-type", "prefixed");
    String listed = acls("--list", "--topic", t).out();
    assertTrue(listed.contains("(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"), listed);
    assertTrue(listed.contains("operation=WRITE"), listed);
    assertTrue(listed.contains("operation=DESCRIBE"), listed);
    // `match` lists every pattern that applies to a name: the prefixed deny applies to pay-orders.
    String matched = acls("--list", "--topic", "pay-orders", "--resource-pattern-type", "match").out();
    assertTrue(matched.contains("principal=User:bob") && matched.contains("patternType=PREFIXED"), matched);
    ResourcePatternFilter topic = new ResourcePatternFilter(ResourceType.TOPIC, t, PatternType.LITERAL);
    assertEquals(3, describe(topic).size()); // READ, WRITE, DESCRIBE
    assertEquals(1, describe(new ResourcePatternFilter(ResourceType.GROUP, g, PatternType.LITERAL)).size());

    acls("--remove", "--force", "--allow-principal", "User:alice", "--operation", "Write", "--topic", t);
    String after = acls("--list", "--topic", t).out();
    assertFalse(after.contains("operation=WRITE"), after);
    acls("--remove", "--force", "--topic", t);
    acls("--remove", "--force", "--group", g);
    acls("--remove", "--force", "--topic", "pay-", "--resource-pattern-type", "prefixed");
    assertTrue(describe(topic).isEmpty());
  }

  @Test
  void adminCreateDescribeDeleteAcls() throws Exception {
    String t = unique("admin-acl");
    AclBinding read = new AclBinding(new ResourcePattern(ResourceType.TOPIC, t, PatternType.LITERAL),
        new AccessControlEntry("User:carol", "*", AclOperation.READ, AclPermissionType.ALLOW));
    AclBinding cluster = new AclBinding(new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL),
        new AccessControlEntry("User:carol", "10.0.0.1", AclOperation.IDEMPOTENT_WRITE, AclPermissionType.ALLOW));
    admin.createAcls(List.of(read, cluster)).all().get(30, TimeUnit.SECONDS);
    // The CLUSTER resource has one name: Kafka's INVALID_REQUEST for another.
    AclBinding badCluster = new AclBinding(new ResourcePattern(ResourceType.CLUSTER, "other", PatternType.LITERAL),
        new AccessControlEntry("User:carol", "*", AclOperation.ALTER, AclPermissionType.ALLOW));
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> admin.createAcls(List.of(badCluster)).all().get(30, TimeUnit.SECONDS));
    assertInstanceOf(InvalidRequestException.class, e.getCause());

    Collection<AclBinding> carol = admin.describeAcls(new AclBindingFilter(ResourcePatternFilter.ANY,
        new AccessControlEntryFilter("User:carol", null, AclOperation.ANY, AclPermissionType.ANY)))
        .values().get(30, TimeUnit.SECONDS);
    assertEquals(2, carol.size(), carol.toString());
    assertTrue(carol.contains(read) && carol.contains(cluster), carol.toString());

    Collection<AclBinding> deleted = admin.deleteAcls(List.of(new AclBindingFilter(
        new ResourcePatternFilter(ResourceType.ANY, null, PatternType.ANY),
        new AccessControlEntryFilter("User:carol", null, AclOperation.ANY, AclPermissionType.ANY))))
        .all().get(30, TimeUnit.SECONDS);
    assertEquals(2, deleted.size(), deleted.toString());
    assertTrue(describe(new ResourcePatternFilter(ResourceType.TOPIC, t, PatternType.LITERAL)).isEmpty());
  }
}
