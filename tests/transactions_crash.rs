//! Exactly once across a broker SIGKILL: a consume-transform-produce application (librdkafka transactional
//! producer, read_committed consumer, offsets sent to each transaction) is killed together with the `strata`
//! binary in the middle of a transaction; after the restart the application starts again with the same
//! `transactional.id` (fencing its former self, whose open transaction is aborted) and finishes. The output holds
//! every input exactly once.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::ChildBroker;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer};
use rdkafka::{Offset, TopicPartitionList};

const T: Duration = Duration::from_secs(30);
const INPUTS: usize = 300;
const BATCH: usize = 25;

fn app(bootstrap: &str) -> (BaseConsumer, BaseProducer) {
    let c = common::consumer(
        bootstrap,
        "eos-app",
        &[("isolation.level", "read_committed")],
    );
    c.subscribe(&["in"]).unwrap();
    let p: BaseProducer = common::client_config(bootstrap)
        .set("transactional.id", "eos-app")
        .create()
        .unwrap();
    p.init_transactions(T).expect("init_transactions");
    (c, p)
}

/// Runs one transaction over the next `BATCH` inputs (fewer at the end); returns how many it consumed.
/// With `commit` false the transaction is left open (the broker is about to be killed).
fn one_transaction(c: &BaseConsumer, p: &BaseProducer, want: usize, commit: bool) -> usize {
    let got = common::consume_n(c, want, T);
    p.begin_transaction().unwrap();
    for m in &got {
        let v = String::from_utf8(m.3.clone().unwrap()).unwrap();
        let out = format!("out:{v}");
        p.send(BaseRecord::<(), _>::to("out").payload(&out))
            .unwrap();
    }
    p.flush(T).unwrap();
    let next = got.last().unwrap().1 + 1;
    let mut pos = TopicPartitionList::new();
    pos.add_partition_offset("in", 0, Offset::Offset(next))
        .unwrap();
    p.send_offsets_to_transaction(&pos, &c.group_metadata().unwrap(), T)
        .unwrap();
    if commit {
        p.commit_transaction(T).unwrap();
    }
    got.len()
}

fn committed(c: &BaseConsumer) -> i64 {
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition("in", 0);
    match c
        .committed_offsets(tpl, T)
        .unwrap()
        .find_partition("in", 0)
        .unwrap()
        .offset()
    {
        Offset::Offset(o) => o,
        _ => 0,
    }
}

#[test]
fn consume_transform_produce_is_exactly_once_across_a_broker_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let broker = ChildBroker::spawn(dir.path(), 0);
    let port = broker.port();
    let bs = broker.bootstrap.clone();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(common::create_topic(&bs, "in", 1));
    rt.block_on(common::create_topic(&bs, "out", 1));
    let input: BaseProducer = common::client_config(&bs)
        .set("acks", "all")
        .create()
        .unwrap();
    for i in 0..INPUTS {
        let v = format!("{i:04}");
        input
            .send(BaseRecord::<(), _>::to("in").payload(&v))
            .unwrap();
    }
    input.flush(T).unwrap();
    drop(input);

    // Three committed transactions, then one left open when the broker dies.
    let (c, p) = app(&bs);
    for _ in 0..3 {
        one_transaction(&c, &p, BATCH, true);
    }
    one_transaction(&c, &p, BATCH, false);
    broker.kill9();
    drop(p);
    drop(c);

    let broker = ChildBroker::spawn(dir.path(), port);
    let (c, p) = app(&broker.bootstrap);
    let mut done = committed(&c) as usize;
    assert_eq!(
        done,
        3 * BATCH,
        "the open transaction's offsets were not committed"
    );
    while done < INPUTS {
        done += one_transaction(&c, &p, BATCH.min(INPUTS - done), true);
    }
    assert_eq!(committed(&c), INPUTS as i64);

    let reader = common::consumer(
        &broker.bootstrap,
        "eos-check",
        &[("isolation.level", "read_committed")],
    );
    common::assign_from_beginning(&reader, "out", 1);
    let got = common::consume_n(&reader, INPUTS, T);
    let extra = reader.poll(Duration::from_millis(500));
    assert!(
        !matches!(extra, Some(Ok(_))),
        "more than {INPUTS} committed outputs"
    );
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for m in got {
        *counts
            .entry(String::from_utf8(m.3.unwrap()).unwrap())
            .or_default() += 1;
    }
    let expected: BTreeMap<String, usize> =
        (0..INPUTS).map(|i| (format!("out:{i:04}"), 1)).collect();
    assert_eq!(counts, expected, "every input exactly once");
    assert!(broker.terminate(), "clean shutdown");
}
