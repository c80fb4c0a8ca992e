use super::*;

const KEYS: &[ConfigKey] = &[
    ConfigKey::new("log.retention.ms", Type::Long, "time retention")
        .default("604800000")
        .validator(Validator::AtLeast(-1))
        .synonyms(&[
            Synonym {
                name: "log.retention.minutes",
                scale: 60_000,
            },
            Synonym {
                name: "log.retention.hours",
                scale: 3_600_000,
            },
        ]),
    ConfigKey::new("auto.create.topics.enable", Type::Boolean, "auto-create").default("true"),
    ConfigKey::new("log.dirs", Type::List, "data dirs")
        .default("./strata-data")
        .validator(Validator::NonEmpty)
        .synonyms(&[Synonym {
            name: "log.dir",
            scale: 1,
        }]),
    ConfigKey::new("cleanup.policy", Type::List, "policy")
        .default("delete")
        .validator(Validator::ListOf(&["delete", "compact"])),
    ConfigKey::new("process.roles", Type::List, "roles")
        .effect(Effect::NoEffect("one node is broker and controller")),
    ConfigKey::new("delegation.token.secret.key", Type::Password, "tokens")
        .effect(Effect::Unsupported("delegation tokens")),
    ConfigKey::new("secret", Type::Password, "a secret").validator(Validator::NonEmpty),
];
const DEF: ConfigDef = ConfigDef::new("broker", KEYS);

fn parse(props: &[(&str, &str, Source)]) -> Result<Values, ConfigError> {
    DEF.parse(props.iter().copied())
}

#[test]
fn defaults_fill_every_key_and_null_stays_null() {
    let v = parse(&[]).unwrap();
    assert_eq!(v.long("log.retention.ms"), 604_800_000);
    assert!(v.bool("auto.create.topics.enable"));
    assert_eq!(v.list("log.dirs"), ["./strata-data"]);
    assert_eq!(v.get("process.roles"), &Value::Null);
    assert_eq!(v.source("log.retention.ms"), Source::Default);
    assert!(!v.is_explicit("log.dirs"));
}

#[test]
fn one_parser_per_type_trims_as_kafka_does() {
    let v = parse(&[
        ("log.retention.ms", " 1000 ", Source::File),
        ("auto.create.topics.enable", "FALSE", Source::File),
        ("log.dirs", " /a , /b ,", Source::File),
    ])
    .unwrap();
    assert_eq!(v.long("log.retention.ms"), 1000);
    assert!(!v.bool("auto.create.topics.enable"));
    assert_eq!(v.list("log.dirs"), ["/a", "/b"]);
}

#[test]
fn a_bad_value_names_the_key_the_value_and_the_rule() {
    let err = parse(&[("log.retention.ms", "-5", Source::File)]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("log.retention.ms") && text.contains("-5") && text.contains("at least -1"),
        "{text}"
    );
    let err = parse(&[("auto.create.topics.enable", "yes", Source::File)]).unwrap_err();
    assert!(err.to_string().contains("true or false"), "{err}");
    let err = parse(&[("cleanup.policy", "delete,shred", Source::File)]).unwrap_err();
    assert!(err.to_string().contains("\"shred\""), "{err}");
}

#[test]
fn synonyms_scale_and_the_own_name_wins_as_in_kafka() {
    let v = parse(&[("log.retention.hours", "2", Source::File)]).unwrap();
    assert_eq!(v.long("log.retention.ms"), 7_200_000);
    let v = parse(&[
        ("log.retention.ms", "5", Source::File),
        ("log.retention.hours", "2", Source::File),
    ])
    .unwrap();
    assert_eq!(v.long("log.retention.ms"), 5);
    let v = parse(&[
        ("log.retention.hours", "2", Source::File),
        ("log.retention.minutes", "3", Source::File),
    ])
    .unwrap();
    assert_eq!(v.long("log.retention.ms"), 180_000, "minutes beat hours");
    // Kafka's `logRetentionTimeMillis`: a negative synonym means unlimited (-1), not -1 hour in ms.
    for syn in ["log.retention.hours", "log.retention.minutes"] {
        let v = parse(&[(syn, "-1", Source::File)]).unwrap();
        assert_eq!(v.long("log.retention.ms"), -1, "{syn}=-1");
    }
    let v = parse(&[("log.dir", "/x", Source::File)]).unwrap();
    assert_eq!(v.list("log.dirs"), ["/x"]);
}

#[test]
fn a_higher_source_wins_file_env_override() {
    let v = parse(&[
        ("log.retention.ms", "3", Source::Override),
        ("log.retention.ms", "1", Source::File),
        ("log.retention.ms", "2", Source::Env),
    ])
    .unwrap();
    assert_eq!(v.long("log.retention.ms"), 3);
    assert_eq!(v.source("log.retention.ms"), Source::Override);
    // A synonym from a higher source beats the own name from a lower one.
    let v = parse(&[
        ("log.retention.ms", "1", Source::File),
        ("log.retention.minutes", "1", Source::Env),
    ])
    .unwrap();
    assert_eq!(v.long("log.retention.ms"), 60_000);
}

#[test]
fn unknown_keys_are_collected_and_no_effect_keys_listed() {
    let v = parse(&[
        ("controller.quorum.voters", "1@x:9093", Source::File),
        ("process.roles", "broker,controller", Source::File),
    ])
    .unwrap();
    assert_eq!(v.unknown(), ["controller.quorum.voters"]);
    assert_eq!(v.ignored(), ["process.roles"]);
}

#[test]
fn an_unsupported_key_is_refused_naming_the_feature() {
    let err = parse(&[("delegation.token.secret.key", "k", Source::File)]).unwrap_err();
    assert!(
        matches!(&err, ConfigError::Unsupported { key, .. } if key == "delegation.token.secret.key"),
        "{err}"
    );
}

#[test]
fn secrets_are_kept_verbatim_and_hidden_in_errors_and_text() {
    let v = parse(&[("secret", " s3cret ", Source::File)]).unwrap();
    assert_eq!(v.string("secret"), Some(" s3cret "));
    assert_eq!(v.get("secret").to_text(), None);
    let err = parse(&[("secret", "", Source::File)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("[hidden]") && err.contains("secret"), "{err}");
}

#[test]
fn closest_suggests_near_names_only() {
    assert_eq!(DEF.closest("log.retention.msec"), Some("log.retention.ms"));
    assert_eq!(DEF.closest("log.dirz"), Some("log.dirs"));
    assert_eq!(DEF.closest("completely.different.thing"), None);
}

#[test]
fn help_and_markdown_list_every_key_with_default_and_effect() {
    let help = render::help(&DEF);
    for k in KEYS {
        assert!(help.contains(k.name), "{help}");
    }
    assert!(help.contains("log.retention.ms=604800000"), "{help}");
    assert!(
        help.contains("[no effect: one node is broker and controller]"),
        "{help}"
    );
    let md = render::markdown(&DEF, "");
    assert!(
        md.contains("| no effect: one node is broker and controller |"),
        "{md}"
    );
    assert_eq!(md.lines().count(), KEYS.len() + 2, "{md}");
    const FIRST: &[ConfigKey] = &[ConfigKey::new("cleanup.policy", Type::List, "again")];
    let two = ConfigDef::new("g", KEYS).with(&[FIRST]);
    assert!(
        two.check_table().is_err(),
        "a key in two groups is a duplicate"
    );
    assert_eq!(two.keys().count(), KEYS.len() + 1);
    assert!(
        md.contains("| `cleanup.policy` | list | `delete` | a list of delete, compact | used |"),
        "{md}"
    );
}

#[test]
fn check_table_catches_bad_defaults_and_duplicates() {
    DEF.check_table().unwrap();
    const BAD_DEFAULT: &[ConfigKey] = &[ConfigKey::new("n", Type::Int, "n")
        .default("x")
        .validator(Validator::AtLeast(0))];
    let err = ConfigDef::new("t", BAD_DEFAULT).check_table().unwrap_err();
    assert!(err.contains("default of n"), "{err}");
    const DUPLICATE: &[ConfigKey] = &[
        ConfigKey::new("a", Type::Int, "a").synonyms(&[Synonym {
            name: "b",
            scale: 1,
        }]),
        ConfigKey::new("b", Type::Int, "b"),
    ];
    let err = ConfigDef::new("t", DUPLICATE).check_table().unwrap_err();
    assert!(err.contains("b twice"), "{err}");
}
