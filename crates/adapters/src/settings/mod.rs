//! The adapters' own tables of the configuration file, checked: the Prometheus and CloudWatch
//! sources, the Redis and PostgreSQL URLs. The binary's configuration reads them as parts of
//! the one file and names each error by its key.

pub mod cloudwatch;
pub mod postgres_url;
pub mod prometheus;
pub mod redis_url;
