//! What this build of the sentinel can reach. The AWS adapters (the SSM parameter channel, the
//! API Gateway stage throttles) are compiled only with the `aws` feature, so that the quick
//! install of the README builds in minutes; a configuration that names them in a build without
//! them is refused naming its key and the install command that has them.

/// The install command of a sentinel with the AWS adapters.
pub const AWS_INSTALL: &str = "cargo install --locked --path host --features aws --profile production";

/// Whether this build has the AWS adapters; if not, what to do about `what`.
pub fn aws_adapters(what: &str) -> Result<(), String> {
    if cfg!(feature = "aws") { Ok(()) } else { Err(aws_missing(what)) }
}

/// Why `what` cannot run in a build without the AWS adapters, and what to do.
pub fn aws_missing(what: &str) -> String {
    format!("{what} needs the AWS adapters, and this sentinel was built without them: install it with `{AWS_INSTALL}`")
}
