//! How the host says what a client library's error was: the error and its causes,
//! `outer: inner: innermost`, each said once (libraries often repeat a cause in the outer text).

/// The error and its causes, each said once.
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = vec![err.to_string()];
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    #[derive(Debug)]
    struct E(&'static str, Option<Box<E>>);
    impl std::fmt::Display for E {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }
    impl std::error::Error for E {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn each_cause_is_said_once_outermost_first() {
        let e = E(
            "error sending request: connection refused",
            Some(Box::new(E("connection refused", Some(Box::new(E("os error 111", None)))))),
        );
        assert_eq!(super::chain(&e), "error sending request: connection refused: os error 111");
    }
}
