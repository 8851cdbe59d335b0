//! `api.request_body_timeout`: a request body that must be complete by a deadline. Unlike
//! `tower_http`'s `TimeoutBody`, which restarts its timer on every frame, a client trickling a
//! byte at a time cannot stretch it: the deadline is fixed when the header is in.

use hyper::body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

/// The body did not arrive in time; what a handler reading it gets (the pin route answers
/// 400 with this message).
#[derive(Debug, thiserror::Error)]
#[error(
    "the request body did not arrive within {} of its header (api.request_body_timeout); send the whole body at once",
    sentinel_core::shown_duration::duration(*.0)
)]
pub struct BodyTimeout(pub Duration);

/// `body`, failing with [`BodyTimeout`] once `limit` has passed since it was wrapped.
#[derive(Debug)]
pub struct DeadlineBody<B> {
    body: B,
    limit: Duration,
    deadline: Pin<Box<Sleep>>,
}

impl<B> DeadlineBody<B> {
    /// Wraps `body`; the deadline starts now.
    pub fn new(body: B, limit: Duration) -> DeadlineBody<B> {
        DeadlineBody { body, limit, deadline: Box::pin(tokio::time::sleep(limit)) }
    }
}

impl<B> Body for DeadlineBody<B>
where
    B: Body + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = B::Data;
    type Error = axum::BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<B::Data>, axum::BoxError>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        match this.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(BodyTimeout(this.limit).into()))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Bytes;
    use http_body_util::BodyExt;
    use std::convert::Infallible;
    use tokio::sync::mpsc;

    /// A body fed a byte every `every`, `n` times: a trickling client.
    struct Trickle(mpsc::Receiver<Bytes>);

    impl Body for Trickle {
        type Data = Bytes;
        type Error = Infallible;
        fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            self.0.poll_recv(cx).map(|bytes| bytes.map(|b| Ok(Frame::data(b))))
        }
    }

    fn trickle(n: usize, every: Duration) -> Trickle {
        let (tx, rx) = mpsc::channel(1);
        tokio::spawn(async move {
            for _ in 0..n {
                tokio::time::sleep(every).await;
                if tx.send(Bytes::from_static(b"x")).await.is_err() {
                    return;
                }
            }
        });
        Trickle(rx)
    }

    #[tokio::test]
    async fn a_body_complete_in_time_is_read_and_a_trickle_cannot_stretch_the_deadline() {
        let ms = Duration::from_millis;
        let body = DeadlineBody::new(trickle(3, ms(20)), ms(1_000));
        assert_eq!(body.collect().await.unwrap().to_bytes(), "xxx");

        // Every byte comes well within the limit of the one before: the deadline still holds.
        let started = std::time::Instant::now();
        let error = DeadlineBody::new(trickle(100, ms(50)), ms(400)).collect().await.unwrap_err();
        let elapsed = started.elapsed();
        assert!(error.downcast_ref::<BodyTimeout>().is_some(), "{error}");
        assert!(elapsed >= ms(400) && elapsed < ms(1_500), "{elapsed:?}");
        assert_eq!(
            error.to_string(),
            "the request body did not arrive within 400ms of its header (api.request_body_timeout); send the whole body at once"
        );
    }
}
