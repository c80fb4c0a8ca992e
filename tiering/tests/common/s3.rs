//! A real S3 HTTP server (s3s + s3s-fs) inside the test process on 127.0.0.1:0, SigV4 with static test keys.
#![allow(dead_code)]
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;

/// Access key and secret the server accepts.
pub const KEY: &str = "testing";

/// A running server; the task stops with the runtime.
pub struct S3Server {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// The bucket created for the test.
    pub bucket: String,
    _dir: tempfile::TempDir,
}

impl S3Server {
    /// Starts a server with one bucket.
    pub async fn start(bucket: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join(bucket)).expect("bucket dir");
        let fs = s3s_fs::FileSystem::new(dir.path()).expect("s3s-fs");
        let mut b = S3ServiceBuilder::new(fs);
        b.set_auth(SimpleAuth::from_single(KEY, KEY));
        let service = b.build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let svc = service.clone();
                tokio::spawn(async move {
                    let _ = ConnBuilder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(sock), svc)
                        .await;
                });
            }
        });
        Self {
            endpoint: format!("http://{addr}"),
            bucket: bucket.to_string(),
            _dir: dir,
        }
    }

    /// `rsm.config.` properties (prefix stripped) pointing at this server.
    pub fn props(&self) -> Vec<(String, String)> {
        [
            ("storage.backend", "s3"),
            ("storage.s3.bucket.name", self.bucket.as_str()),
            ("storage.s3.region", "us-east-1"),
            ("storage.s3.endpoint.url", self.endpoint.as_str()),
            ("storage.s3.path.style.access.enabled", "true"),
            ("storage.aws.access.key.id", KEY),
            ("storage.aws.secret.access.key", KEY),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }
}
