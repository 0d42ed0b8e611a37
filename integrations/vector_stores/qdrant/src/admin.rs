//! Collection housekeeping on a Qdrant server: list, size and drop
//! collections (what a program managing several indexes needs beside the store).

use crate::store::PROVIDER;
use qdrant_client::Qdrant;
use qdrant_client::qdrant::CountPoints;
use ragloom_core::error::{Error, Result};

fn client(url: &str, api_key: Option<&str>) -> Result<Qdrant> {
    let mut builder = Qdrant::from_url(url).skip_compatibility_check();
    if let Some(key) = api_key {
        builder = builder.api_key(key);
    }
    builder
        .build()
        .map_err(|e| Error::provider(PROVIDER, format!("connecting to Qdrant at {url}: {e}"), e))
}

fn failed(what: String, e: qdrant_client::QdrantError) -> Error {
    Error::provider(PROVIDER, format!("{what}: {e}"), e)
}

/// The names of the server's collections that start with `prefix`, sorted.
pub async fn collection_names(
    url: &str,
    api_key: Option<&str>,
    prefix: &str,
) -> Result<Vec<String>> {
    let list = client(url, api_key)?
        .list_collections()
        .await
        .map_err(|e| failed(format!("listing the collections of {url}"), e))?;
    let mut names: Vec<String> = list
        .collections
        .into_iter()
        .map(|c| c.name)
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    Ok(names)
}

/// Drops `collection` if it exists.
pub async fn drop_collection(url: &str, api_key: Option<&str>, collection: &str) -> Result<()> {
    let client = client(url, api_key)?;
    let exists = client
        .collection_exists(collection)
        .await
        .map_err(|e| failed(format!("checking collection `{collection}`"), e))?;
    if exists {
        client
            .delete_collection(collection)
            .await
            .map_err(|e| failed(format!("dropping collection `{collection}`"), e))?;
    }
    Ok(())
}

/// How many points `collection` holds (0 when it does not exist).
pub async fn count_points(url: &str, api_key: Option<&str>, collection: &str) -> Result<u64> {
    let client = client(url, api_key)?;
    let exists = client
        .collection_exists(collection)
        .await
        .map_err(|e| failed(format!("checking collection `{collection}`"), e))?;
    if !exists {
        return Ok(0);
    }
    let response = client
        .count(CountPoints {
            collection_name: collection.to_string(),
            exact: Some(true),
            ..Default::default()
        })
        .await
        .map_err(|e| failed(format!("counting the points of `{collection}`"), e))?;
    Ok(response.result.map_or(0, |r| r.count))
}
