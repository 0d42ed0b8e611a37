//! Which addresses a request may reach: names are resolved here, and loopback,
//! private, link-local and other internal addresses are refused before any
//! connection is made, so a model cannot reach them through DNS (or rebinding).

use ragloom_core::error::{Error, Result};
use std::fmt;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

/// Resolves host names to addresses; [`SystemResolver`] by default, a stub in tests.
pub trait HostResolver: Send + Sync + fmt::Debug {
    /// The addresses of `host`.
    fn lookup<'a>(
        &'a self,
        host: &'a str,
    ) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>>;
}

/// The operating system's resolver (`getaddrinfo`, through tokio).
#[derive(Debug, Default)]
pub struct SystemResolver;

impl HostResolver for SystemResolver {
    fn lookup<'a>(
        &'a self,
        host: &'a str,
    ) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>> {
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host, 0))
                .await?
                .map(|a| a.ip())
                .collect())
        })
    }
}

fn v4_is_internal(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        // "This network" (0/8) and carrier-grade NAT (100.64/10).
        || a == 0
        || (a == 100 && (64..128).contains(&b))
}

/// Whether `ip` is an address inside a machine or its network: loopback,
/// private, link-local, CGNAT, unspecified, broadcast, multicast, unique
/// local, or an IPv4-mapped, -compatible or NAT64 form of one of those.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4_is_internal(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return v4_is_internal(v4);
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                // Unique local fc00::/7, link-local fe80::/10.
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
        }
    }
}

/// The IPv4 address an IPv6 one carries: mapped (`::ffff:a.b.c.d`),
/// compatible (`::a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`).
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = v6.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = v6.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0];
    // `::` and `::1` are themselves, not IPv4-compatible forms.
    let compatible = s[..6] == [0; 6] && (s[6] != 0 || s[7] > 1);
    (nat64 || compatible).then_some(tail)
}

/// The refusal for `host`, naming what it resolved to.
pub(crate) fn refused(host: &str, addrs: &[IpAddr]) -> Error {
    let list: Vec<String> = addrs.iter().map(ToString::to_string).collect();
    Error::InvalidInput(format!(
        "refused: {host} is an internal address ({}); requests may only reach public addresses unless allow_internal_addresses(true) is set",
        list.join(", ")
    ))
}

/// reqwest's resolver: looks names up with a [`HostResolver`] and keeps only
/// the addresses that may be reached; a name left with none is an error, so
/// no connection is attempted.
#[derive(Debug, Clone)]
pub(crate) struct GuardedResolver {
    pub(crate) inner: Arc<dyn HostResolver>,
    pub(crate) allow_internal: bool,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let this = self.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found = this.inner.lookup(&host).await?;
            let kept: Vec<SocketAddr> = found
                .iter()
                .filter(|ip| this.allow_internal || !is_internal(**ip))
                .map(|ip| SocketAddr::new(*ip, 0))
                .collect();
            if kept.is_empty() {
                let err: Box<dyn std::error::Error + Send + Sync> = if found.is_empty() {
                    format!("{host} has no address").into()
                } else {
                    Box::new(refused(&host, &found))
                };
                return Err(err);
            }
            let addrs: reqwest::dns::Addrs = Box::new(kept.into_iter());
            Ok(addrs)
        })
    }
}

/// Refuses a URL whose host is an internal IP literal (reqwest connects to
/// literals without asking the resolver).
pub(crate) fn check_literal(url: &url::Url, allow_internal: bool) -> Result<()> {
    let ip = match url.host() {
        Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
        Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
        _ => return Ok(()),
    };
    if !allow_internal && is_internal(ip) {
        return Err(refused(&ip.to_string(), &[ip]));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_in_every_form_are_recognised() {
        for internal in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "64:ff9b::7f00:1",
        ] {
            let ip: IpAddr = internal.parse().unwrap();
            assert!(is_internal(ip), "{internal} should be internal");
        }
        for public in [
            "93.184.216.34",
            "1.1.1.1",
            "100.63.255.255",
            "100.128.0.1",
            "172.32.0.1",
            "2606:4700::1111",
            "::ffff:93.184.216.34",
            "64:ff9b::5db8:d822",
        ] {
            let ip: IpAddr = public.parse().unwrap();
            assert!(!is_internal(ip), "{public} should be public");
        }
    }
}
