//! moto's server: SSM and API Gateway on one port. The first request loads lazily (~600 ms),
//! so `start` warms it.

use super::{ServerProcess, binary, free_port};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

pub struct Moto {
    pub process: ServerProcess,
    _dir: tempfile::TempDir,
}

impl Moto {
    pub fn start() -> Moto {
        Moto::start_on(free_port())
    }

    pub fn start_on(port: u16) -> Moto {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut cmd = Command::new(binary("moto_server", "pip install 'moto[server]'"));
        cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()]).current_dir(dir.path());
        let process = ServerProcess::spawn("moto", cmd, port, dir.path(), Duration::from_secs(30));
        let moto = Moto { process, _dir: dir };
        moto.reset();
        moto.warm_ssm();
        moto
    }

    /// One SSM call (`DescribeParameters`; moto routes by the credential scope of the
    /// `Authorization` header, whose signature it does not check), so that moto loads its SSM
    /// service now: the first
    /// call of a service loads it (seconds on a loaded machine), and a sentinel's first
    /// publication, bounded by its 3 s timeout, could fail on it.
    fn warm_ssm(&self) {
        let mut stream = TcpStream::connect(self.process.addr()).expect("connecting to moto");
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        let body = "{}";
        write!(
            stream,
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Amz-Target: AmazonSSM.DescribeParameters\r\n\
             Content-Type: application/x-amz-json-1.1\r\n\
             Authorization: AWS4-HMAC-SHA256 Credential=testing/20261206/us-east-1/ssm/aws4_request, SignedHeaders=host, Signature=00\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("writing to moto");
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200"), "moto SSM warm-up: {answer}");
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.process.port)
    }

    /// `POST /moto-api/reset`: forget every parameter and API.
    pub fn reset(&self) {
        let mut stream = TcpStream::connect(self.process.addr()).expect("connecting to moto");
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        write!(stream, "POST /moto-api/reset HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .expect("writing to moto");
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200"), "moto reset: {answer}");
    }

    /// The environment an AWS SDK client needs to talk to this moto.
    pub fn aws_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ACCESS_KEY_ID", "testing".into()),
            ("AWS_SECRET_ACCESS_KEY", "testing".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_EC2_METADATA_DISABLED", "true".into()),
        ]
    }
}
