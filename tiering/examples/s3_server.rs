//! A local S3 HTTP server (s3s + s3s-fs, the one the tests use) for trying the `s3` backend and for the tiering
//! benchmarks: objects are files under DIR, one bucket, SigV4 with one static key pair, path-style only.
//!
//! `cargo run --release -p strata-tiering --example s3_server -- DIR [ADDR] [BUCKET] [KEY]`
//! (defaults: 127.0.0.1:9000, bucket `strata`, access key = secret key = `strata-local`). Stop it with Ctrl-C.
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: s3_server DIR [ADDR] [BUCKET] [KEY]";
    let dir = std::path::PathBuf::from(args.next().ok_or(usage)?);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:9000".to_string());
    let bucket = args.next().unwrap_or_else(|| "strata".to_string());
    let key = args.next().unwrap_or_else(|| "strata-local".to_string());
    std::fs::create_dir_all(dir.join(&bucket))
        .map_err(|e| format!("creating bucket dir {}: {e}", dir.join(&bucket).display()))?;
    let fs =
        s3s_fs::FileSystem::new(&dir).map_err(|e| format!("s3s-fs on {}: {e:?}", dir.display()))?;
    let mut builder = S3ServiceBuilder::new(fs);
    builder.set_auth(SimpleAuth::from_single(key.as_str(), key.as_str()));
    let service = builder.build();
    let listener = tokio::net::TcpListener::bind(&addr)
        .await
        .map_err(|e| format!("binding {addr}: {e}"))?;
    println!(
        "s3 server on http://{} bucket={bucket} access key = secret key = {key}, objects under {}",
        listener.local_addr()?,
        dir.display()
    );
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (sock, _) = accepted?;
                // Without it, the 4 KiB body writes of s3s-fs meet the client's delayed ACKs (40 ms stalls).
                sock.set_nodelay(true)?;
                let svc = service.clone();
                tokio::spawn(async move {
                    let _ = ConnBuilder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(sock), svc)
                        .await;
                });
            }
            _ = tokio::signal::ctrl_c() => return Ok(()),
        }
    }
}
