//! Responses as trees of fields, read from kafka-protocol's `{:#?}` output, and the normaliser that makes the two
//! brokers' answers comparable.
//!
//! The normaliser (see README.md here) touches only values that differ between two correct brokers:
//! - masked (`<masked>`): `throttle_time_ms`, `cluster_id`, `host`, `port`, `session_id` (fetch sessions),
//!   `log_append_time_ms`, `finalized_features_epoch`, `unknown_tagged_fields`, `log_dir`,
//!   `total_bytes`, `usable_bytes` (the disk's);
//! - error messages: a present message becomes `<text>` (Kafka's wording is not a contract), `None` stays;
//! - ids a broker makes up (`topic_id`, `member_id`, `leader` (a member id), `producer_id`, `incarnation_id`):
//!   each distinct value becomes `id#N` in order of first appearance within one case, so "the same id twice"
//!   and "a new id" still compare; the nil UUID, -1 and "" stay;
//! - lists are compared as multisets (sorted), except `records`, `synonyms` and `assignment`, whose order is
//!   meaning.

use std::collections::BTreeMap;

/// A response field: a leaf value (as Debug prints it), a list, or a struct's named fields.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Leaf(String),
    Seq(Vec<Node>),
    Rec(Vec<(String, Node)>),
}

enum Frame {
    Rec(Vec<(String, Node)>),
    Seq(Vec<Node>),
    /// A tuple struct or `Some(..)`: transparent when it has one element.
    Tuple(Vec<Node>),
}

impl Frame {
    fn push(&mut self, key: String, n: Node) {
        match self {
            Frame::Rec(v) => v.push((key, n)),
            Frame::Seq(v) | Frame::Tuple(v) => v.push(n),
        }
    }
    fn close(self) -> Node {
        match self {
            Frame::Rec(v) => Node::Rec(v),
            Frame::Seq(v) => Node::Seq(v),
            Frame::Tuple(mut v) if v.len() == 1 => v.pop().unwrap(),
            Frame::Tuple(v) => Node::Seq(v),
        }
    }
}

impl Node {
    /// Reads a `{:#?}` rendering (one field per line).
    pub fn parse(text: &str) -> Node {
        let mut stack: Vec<(String, Frame)> = vec![(String::new(), Frame::Tuple(Vec::new()))];
        for raw in text.lines() {
            let line = raw.trim();
            let line = line.strip_suffix(',').unwrap_or(line);
            if matches!(line, "}" | "]" | ")") {
                let (key, frame) = stack.pop().expect("balanced");
                stack.last_mut().expect("root").1.push(key, frame.close());
                continue;
            }
            let in_rec = matches!(stack.last(), Some((_, Frame::Rec(_))));
            let (key, rest) = if in_rec {
                match line.split_once(": ") {
                    Some((k, v)) => (k.to_string(), v),
                    None => (String::new(), line),
                }
            } else {
                (String::new(), line)
            };
            let opener = !rest.starts_with('"') && !rest.starts_with("b\"");
            if opener && rest.ends_with('{') && rest != "{}" {
                let is_map = rest == "{";
                stack.push((
                    key,
                    if is_map {
                        Frame::Seq(Vec::new())
                    } else {
                        Frame::Rec(Vec::new())
                    },
                ));
            } else if opener && rest.ends_with('[') {
                stack.push((key, Frame::Seq(Vec::new())));
            } else if opener && rest.ends_with('(') {
                stack.push((key, Frame::Tuple(Vec::new())));
            } else {
                stack
                    .last_mut()
                    .unwrap()
                    .1
                    .push(key, Node::Leaf(rest.to_string()));
            }
        }
        let (_, root) = stack.pop().unwrap();
        root.close()
    }

    /// Flattens to `path = value` lines (`topics[0].partitions[1].error_code`).
    pub fn flatten(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        self.flatten_into("", &mut out);
        out
    }

    fn flatten_into(&self, path: &str, out: &mut BTreeMap<String, String>) {
        match self {
            Node::Leaf(v) => {
                out.insert(path.to_string(), v.clone());
            }
            Node::Seq(items) => {
                if items.is_empty() {
                    out.insert(path.to_string(), "[]".into());
                }
                for (i, n) in items.iter().enumerate() {
                    n.flatten_into(&format!("{path}[{i}]"), out);
                }
            }
            Node::Rec(fields) => {
                for (k, n) in fields {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    n.flatten_into(&p, out);
                }
            }
        }
    }
}

/// Fields whose values say nothing about correctness (timing, addresses, cluster identity).
const MASKED: &[&str] = &[
    "throttle_time_ms",
    "cluster_id",
    "host",
    "port",
    "session_id",
    "log_append_time_ms",
    "finalized_features_epoch",
    "unknown_tagged_fields",
    "log_dir",
    "total_bytes",
    "usable_bytes",
];

/// Ids a broker makes up: compared by identity within a case (`id#N`).
const ALIASED: &[&str] = &[
    "topic_id",
    "member_id",
    "leader",
    "producer_id",
    "incarnation_id",
];

/// Lists whose order carries meaning.
const ORDERED: &[&str] = &["records", "synonyms", "assignment"];

/// Per-case state of the normaliser: the aliases given so far.
#[derive(Default)]
pub struct Normaliser {
    aliases: BTreeMap<String, String>,
}

impl Normaliser {
    /// Normalises `n` in place.
    pub fn apply(&mut self, n: &mut Node) {
        sort_lists(n, "");
        self.walk(n, "");
    }

    fn walk(&mut self, n: &mut Node, key: &str) {
        match n {
            Node::Leaf(v) => *v = self.leaf(key, v),
            Node::Seq(items) => items.iter_mut().for_each(|c| self.walk(c, key)),
            Node::Rec(fields) => fields.iter_mut().for_each(|(k, c)| {
                let k = k.clone();
                self.walk(c, &k)
            }),
        }
    }

    fn leaf(&mut self, key: &str, v: &str) -> String {
        if MASKED.contains(&key) {
            return "<masked>".into();
        }
        if key == "error_message" || key == "message" {
            return if v == "None" {
                v.into()
            } else {
                "<text>".into()
            };
        }
        if ALIASED.contains(&key) && !is_nil(v) {
            let next = format!("id#{}", self.aliases.len() + 1);
            return self.aliases.entry(v.to_string()).or_insert(next).clone();
        }
        v.to_string()
    }
}

/// Values that mean "none": the nil UUID, -1, an empty string.
fn is_nil(v: &str) -> bool {
    matches!(
        v,
        "00000000-0000-0000-0000-000000000000" | "-1" | "\"\"" | "None"
    )
}

/// Sorts every list not in [`ORDERED`] by its elements' rendering with aliased ids blanked.
fn sort_lists(n: &mut Node, key: &str) {
    match n {
        Node::Leaf(_) => {}
        Node::Seq(items) => {
            items.iter_mut().for_each(|c| sort_lists(c, key));
            if !ORDERED.contains(&key) {
                items.sort_by_cached_key(sort_key);
            }
        }
        Node::Rec(fields) => fields.iter_mut().for_each(|(k, c)| {
            let k = k.clone();
            sort_lists(c, &k)
        }),
    }
}

fn sort_key(n: &Node) -> String {
    let mut blanked = n.clone();
    blank(&mut blanked, "");
    format!("{blanked:?}")
}

fn blank(n: &mut Node, key: &str) {
    match n {
        Node::Leaf(v) => {
            if ALIASED.contains(&key) || MASKED.contains(&key) {
                v.clear();
            }
        }
        Node::Seq(items) => items.iter_mut().for_each(|c| blank(c, key)),
        Node::Rec(fields) => fields.iter_mut().for_each(|(k, c)| {
            let k = k.clone();
            blank(c, &k)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_debug_and_flattens_paths() {
        let text = "R {\n    topics: [\n        T {\n            name: TopicName(\n                \"a\",\n            ),\n            error_code: 3,\n            msg: Some(\n                \"x {\",\n            ),\n        },\n    ],\n    tags: {},\n}";
        let flat = Node::parse(text).flatten();
        assert_eq!(flat["topics[0].name"], "\"a\"");
        assert_eq!(flat["topics[0].error_code"], "3");
        assert_eq!(flat["topics[0].msg"], "\"x {\"");
        assert_eq!(flat["tags"], "{}");
    }
}
