// Command franz-check runs franz-go (the Go client) and its admin package kadm against a broker, asserting what
// comes back: admin calls (create/describe/alter configs, metadata, offsets, groups, producers, transactions,
// delete), the idempotent producer (every record once, offsets dense per partition), a consumer group that
// commits and resumes, and GroupTransactSession (consume-transform-produce exactly once, with an aborted round that
// a read_committed reader never sees). Usage: franz-check BOOTSTRAP. Exits non-zero naming the first failure.
// `franz-check scram-user BOOTSTRAP USER PASSWORD` creates a SCRAM-SHA-256 user (for franz-suite.sh).
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const records = 1000

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	if len(os.Args) == 5 && os.Args[1] == "scram-user" {
		// For franz-suite.sh: creates a SCRAM-SHA-256 user with kadm (AlterUserScramCredentials).
		if err := scramUser(ctx, os.Args[2], os.Args[3], os.Args[4]); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: franz-check BOOTSTRAP | franz-check scram-user BOOTSTRAP USER PASSWORD")
		os.Exit(2)
	}
	if err := run(ctx, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("franz-go: all checks passed")
}

func scramUser(ctx context.Context, bs, user, pass string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bs))
	if err != nil {
		return err
	}
	defer cl.Close()
	res, err := kadm.NewClient(cl).AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user,
		Mechanism: kadm.ScramSha256, Iterations: 8192, Password: pass}})
	if err != nil {
		return err
	}
	return res.Error()
}

func run(ctx context.Context, bs string) error {
	suffix := fmt.Sprintf("%08x", rand.Uint32())
	in, out, group, etl := "franz-in-"+suffix, "franz-out-"+suffix, "franz-g-"+suffix, "franz-etl-"+suffix

	cl, err := kgo.NewClient(kgo.SeedBrokers(bs))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	if err := admin(ctx, adm, in, out); err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	if err := idempotent(ctx, bs, adm, in); err != nil {
		return fmt.Errorf("idempotent produce: %w", err)
	}
	if err := consumerGroup(ctx, bs, adm, in, group); err != nil {
		return fmt.Errorf("consumer group: %w", err)
	}
	if err := transact(ctx, bs, adm, in, out, etl); err != nil {
		return fmt.Errorf("GroupTransactSession: %w", err)
	}
	deleted, err := adm.DeleteTopics(ctx, in, out)
	if err != nil {
		return fmt.Errorf("delete topics: %w", err)
	}
	if err := deleted.Error(); err != nil {
		return fmt.Errorf("delete topics: %w", err)
	}
	// kadm answers ListTopics from the client's cached metadata (up to kgo's MetadataMinAge, 5 s) when it can, so
	// the deletion shows within that, not at once.
	deadline := time.Now().Add(15 * time.Second)
	for {
		topics, err := adm.ListTopics(ctx)
		if err != nil {
			return err
		}
		if !topics.Has(in) && !topics.Has(out) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("deleted topics still listed: %v", topics.Names())
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func admin(ctx context.Context, adm *kadm.Client, in, out string) error {
	brokers, err := adm.ListBrokers(ctx)
	if err != nil || len(brokers) != 1 {
		return fmt.Errorf("list brokers: %v %v", brokers, err)
	}
	created, err := adm.CreateTopics(ctx, 3, 1, map[string]*string{"retention.ms": kadm.StringPtr("3600000")}, in, out)
	if err != nil {
		return err
	}
	if err := created.Error(); err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	// Creating it again: TOPIC_ALREADY_EXISTS.
	again, err := adm.CreateTopic(ctx, 3, 1, nil, in)
	if err == nil && again.Err == nil {
		return errors.New("second create of a topic succeeded")
	}
	td, err := adm.ListTopics(ctx, in)
	if err != nil || len(td[in].Partitions) != 3 {
		return fmt.Errorf("list topics: %v %v", td, err)
	}
	alter, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: kadm.StringPtr("delete")},
		{Name: "max.message.bytes", Value: kadm.StringPtr("2000000")}}, in)
	if err != nil {
		return err
	}
	for _, r := range alter {
		if r.Err != nil {
			return fmt.Errorf("alter configs: %w", r.Err)
		}
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, in)
	if err != nil {
		return err
	}
	rc, err := rcs.On(in, nil)
	if err != nil {
		return err
	}
	got := map[string]string{}
	for _, c := range rc.Configs {
		got[c.Key] = c.MaybeValue()
	}
	if got["max.message.bytes"] != "2000000" || got["retention.ms"] != "3600000" {
		return fmt.Errorf("described configs: max.message.bytes=%q retention.ms=%q", got["max.message.bytes"],
			got["retention.ms"])
	}
	// A bad value is refused with a clear error.
	bad, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("soon")}}, in)
	if err == nil && bad[0].Err == nil {
		return errors.New("retention.ms=soon accepted")
	}
	if _, err := adm.CreatePartitions(ctx, 1, out); err != nil {
		return fmt.Errorf("create partitions: %w", err)
	}
	td, err = adm.ListTopics(ctx, out)
	if err != nil || len(td[out].Partitions) != 4 {
		return fmt.Errorf("partitions after CreatePartitions: %v %v", td, err)
	}
	if _, err := adm.ApiVersions(ctx); err != nil {
		return fmt.Errorf("api versions: %w", err)
	}
	return nil
}

func idempotent(ctx context.Context, bs string, adm *kadm.Client, in string) error {
	p, err := kgo.NewClient(kgo.SeedBrokers(bs), kgo.DefaultProduceTopic(in), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer p.Close()
	rs := make([]*kgo.Record, records)
	for i := range rs {
		rs[i] = &kgo.Record{Key: []byte(fmt.Sprintf("k%d", i%17)), Value: []byte(fmt.Sprintf("v%04d", i))}
	}
	res := p.ProduceSync(ctx, rs...)
	if err := res.FirstErr(); err != nil {
		return err
	}
	offsets := map[int32][]int64{}
	for _, r := range res {
		offsets[r.Record.Partition] = append(offsets[r.Record.Partition], r.Record.Offset)
	}
	ends, err := adm.ListEndOffsets(ctx, in)
	if err != nil {
		return err
	}
	total := int64(0)
	for part, os := range offsets {
		sort.Slice(os, func(i, j int) bool { return os[i] < os[j] })
		for i, o := range os {
			if o != int64(i) {
				return fmt.Errorf("partition %d offsets not dense: %v", part, os[:i+1])
			}
		}
		end, _ := ends.Lookup(in, part)
		if end.Offset != int64(len(os)) {
			return fmt.Errorf("partition %d end offset %d, produced %d", part, end.Offset, len(os))
		}
		total += end.Offset
	}
	if total != records {
		return fmt.Errorf("end offsets sum to %d, produced %d", total, records)
	}
	producers, err := adm.DescribeProducers(ctx, kadm.TopicsSet{in: {0: {}, 1: {}, 2: {}}})
	if err != nil {
		return fmt.Errorf("describe producers: %w", err)
	}
	if len(producers.SortedProducers()) == 0 {
		return errors.New("describe producers: the idempotent producer is not listed")
	}
	return nil
}

func consumerGroup(ctx context.Context, bs string, adm *kadm.Client, in, group string) error {
	consume := func(n int) ([]string, error) {
		c, err := kgo.NewClient(kgo.SeedBrokers(bs), kgo.ConsumerGroup(group), kgo.ConsumeTopics(in),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
		if err != nil {
			return nil, err
		}
		defer c.Close()
		var got []string
		for len(got) < n {
			fs := c.PollFetches(ctx)
			if err := ctx.Err(); err != nil {
				return got, fmt.Errorf("got %d of %d: %w", len(got), n, err)
			}
			if errs := fs.Errors(); len(errs) > 0 {
				return got, fmt.Errorf("fetch: %v", errs)
			}
			fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		if n > 0 {
			dg, err := adm.DescribeGroups(ctx, group)
			if err != nil {
				return got, err
			}
			if g := dg[group]; g.State != "Stable" || len(g.Members) != 1 {
				return got, fmt.Errorf("group while consuming: state %q, %d members", g.State, len(g.Members))
			}
		}
		return got, c.CommitUncommittedOffsets(ctx)
	}
	got, err := consume(records)
	if err != nil {
		return err
	}
	if err := distinct(got, records); err != nil {
		return err
	}
	lag, err := adm.Lag(ctx, group)
	if err != nil {
		return err
	}
	if l := lag[group]; l.Error() != nil || l.Lag.Total() != 0 {
		return fmt.Errorf("lag after commit: %d (%v)", l.Lag.Total(), l.Error())
	}
	// More records; a new member of the group resumes at the commit and reads only those.
	p, err := kgo.NewClient(kgo.SeedBrokers(bs), kgo.DefaultProduceTopic(in))
	if err != nil {
		return err
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("late-1"), kgo.StringRecord("late-2"),
		kgo.StringRecord("late-3")).FirstErr(); err != nil {
		p.Close()
		return err
	}
	p.Close()
	late, err := consume(3)
	if err != nil {
		return err
	}
	sort.Strings(late)
	if strings.Join(late, ",") != "late-1,late-2,late-3" {
		return fmt.Errorf("resumed group read %v", late)
	}
	groups, err := adm.ListGroups(ctx)
	if err != nil || !hasGroup(groups, group) {
		return fmt.Errorf("list groups: %v %v", groups.Groups(), err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return err
	}
	sum := int64(0)
	committed.Each(func(o kadm.OffsetResponse) { sum += o.At })
	if sum != records+3 {
		return fmt.Errorf("committed offsets sum to %d, want %d", sum, records+3)
	}
	return nil
}

func hasGroup(l kadm.ListedGroups, g string) bool {
	_, ok := l[g]
	return ok
}

func distinct(got []string, n int) error {
	set := map[string]bool{}
	for _, v := range got {
		if set[v] {
			return fmt.Errorf("%q read twice", v)
		}
		set[v] = true
	}
	if len(set) != n {
		return fmt.Errorf("read %d distinct of %d", len(set), n)
	}
	return nil
}

// transact runs GroupTransactSession over in (the idempotent producer's records and three late ones): each polled
// batch is upper-cased into out and committed with the group's offsets in one transaction; the first batch's
// transaction is aborted (so its records are polled again). A read_committed reader of out sees every input once.
func transact(ctx context.Context, bs string, adm *kadm.Client, in, out, etl string) error {
	const want = records + 3
	s, err := kgo.NewGroupTransactSession(kgo.SeedBrokers(bs), kgo.TransactionalID(etl+"-txid"),
		kgo.ConsumerGroup(etl), kgo.ConsumeTopics(in), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RequireStableFetchOffsets(),
		kgo.TransactionTimeout(30*time.Second))
	if err != nil {
		return err
	}
	defer s.Close()
	committedInputs, aborted := 0, 0
	for committedInputs < want {
		fs := s.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%d of %d inputs committed: %w", committedInputs, want, err)
		}
		if errs := fs.Errors(); len(errs) > 0 {
			return fmt.Errorf("poll: %v", errs)
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := s.Begin(); err != nil {
			return err
		}
		var outs []*kgo.Record
		fs.EachRecord(func(r *kgo.Record) {
			outs = append(outs, &kgo.Record{Topic: out, Key: r.Key, Value: []byte(strings.ToUpper(string(r.Value)))})
		})
		if err := s.ProduceSync(ctx, outs...).FirstErr(); err != nil {
			return fmt.Errorf("produce in transaction: %w", err)
		}
		try := kgo.TryCommit
		if aborted == 0 {
			try = kgo.TryAbort
		}
		committed, err := s.End(ctx, try)
		if err != nil {
			return fmt.Errorf("end transaction: %w", err)
		}
		if try == kgo.TryAbort {
			aborted = len(outs)
			continue
		}
		if committed {
			committedInputs += len(outs)
		}
	}
	if aborted == 0 {
		return errors.New("no round was aborted")
	}
	readAll := func(level kgo.IsolationLevel, min int) ([]string, error) {
		c, err := kgo.NewClient(kgo.SeedBrokers(bs), kgo.ConsumeTopics(out), kgo.FetchIsolationLevel(level),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			return nil, err
		}
		defer c.Close()
		var got []string
		quiet := time.Now().Add(2 * time.Second)
		for len(got) < min || time.Now().Before(quiet) {
			pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
			fs := c.PollFetches(pctx)
			pcancel()
			if ctx.Err() != nil {
				return got, fmt.Errorf("read %d of at least %d: %w", len(got), min, ctx.Err())
			}
			fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		}
		return got, nil
	}
	rc, err := readAll(kgo.ReadCommitted(), want)
	if err != nil {
		return err
	}
	if err := distinct(rc, want); err != nil {
		return fmt.Errorf("read_committed: %w", err)
	}
	for _, v := range rc {
		if v != strings.ToUpper(v) {
			return fmt.Errorf("unexpected value %q", v)
		}
	}
	ru, err := readAll(kgo.ReadUncommitted(), want+aborted)
	if err != nil {
		return err
	}
	if len(ru) != want+aborted {
		return fmt.Errorf("read_uncommitted saw %d, want %d committed + %d aborted", len(ru), want, aborted)
	}
	lag, err := adm.Lag(ctx, etl)
	if err != nil {
		return err
	}
	if l := lag[etl]; l.Error() != nil || l.Lag.Total() != 0 {
		return fmt.Errorf("etl group lag after the last commit: %d (%v)", l.Lag.Total(), l.Error())
	}
	txns, err := adm.DescribeTransactions(ctx, etl+"-txid")
	if err != nil {
		return fmt.Errorf("describe transactions: %w", err)
	}
	t, ok := txns[etl+"-txid"]
	if !ok || t.Err != nil || t.State != "CompleteCommit" {
		return fmt.Errorf("describe transactions: %+v", txns)
	}
	return nil
}
