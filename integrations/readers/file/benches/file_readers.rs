//! Throughput of the file readers on generated inputs: CSV (Python csv and
//! pandas rules), JSON (`levels_back`), Markdown sections, HTML text, and the PDF fixture.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ragloom_core::Metadata;
use ragloom_core::readers::FileReader;
use ragloom_readers_file::{
    CSVReader, HTMLReader, JSONReader, MarkdownReader, PDFReader, PandasCSVReader,
};
use std::hint::black_box;
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    if let Err(e) = std::fs::write(&path, text) {
        panic!("cannot write {}: {e}", path.display());
    }
    path
}

fn bench(c: &mut Criterion) {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => panic!("no temp dir: {e}"),
    };
    let mut csv = String::from("id,name,score,city,active\n");
    for i in 0..10_000 {
        csv.push_str(&format!(
            "{i},name {i},{}.5,\"City, {}\",{}\n",
            i % 97,
            i % 13,
            i % 2 == 0
        ));
    }
    let mut json = String::from("[");
    for i in 0..2_000 {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!(
            "{{\"id\": {i}, \"name\": \"item {i}\", \"tags\": [\"a\", \"b\"], \"nested\": {{\"x\": {i}.25, \"ok\": true}}}}"
        ));
    }
    json.push(']');
    let mut md = String::new();
    let mut html = String::from("<html><head><title>Bench</title></head><body>");
    for i in 0..1_000 {
        md.push_str(&format!(
            "# Part {i}\n\nSome text with a [link](http://x.invalid/{i}) here.\n\n## Sub {i}\n\nMore text.\n\n"
        ));
        html.push_str(&format!(
            "<h2>Part {i}</h2><p>Some <b>bold</b> text and a <a href='#'>link</a>.</p><ul><li>one</li><li>two</li></ul>"
        ));
    }
    html.push_str("</body></html>");
    let files = [
        (
            "csv_python_10k_rows",
            write(dir.path(), "a.csv", &csv),
            csv.len(),
        ),
        (
            "json_levels_back_2k_items",
            write(dir.path(), "a.json", &json),
            json.len(),
        ),
        (
            "markdown_2k_sections",
            write(dir.path(), "a.md", &md),
            md.len(),
        ),
        (
            "html_1k_blocks",
            write(dir.path(), "a.html", &html),
            html.len(),
        ),
    ];
    let readers: [(&str, Box<dyn FileReader>); 5] = [
        ("csv_python_10k_rows", Box::new(CSVReader::new())),
        (
            "json_levels_back_2k_items",
            Box::new(JSONReader::new().levels_back(0)),
        ),
        ("markdown_2k_sections", Box::new(MarkdownReader::new())),
        ("html_1k_blocks", Box::new(HTMLReader::new())),
        ("csv_pandas_10k_rows", Box::new(PandasCSVReader::new())),
    ];
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(rt) => rt,
        Err(e) => panic!("no runtime: {e}"),
    };
    let mut group = c.benchmark_group("file_readers");
    for (name, reader) in &readers {
        let key = if *name == "csv_pandas_10k_rows" {
            "csv_python_10k_rows"
        } else {
            name
        };
        let Some((_, path, len)) = files.iter().find(|(n, _, _)| *n == key) else {
            continue;
        };
        group.throughput(Throughput::Bytes(*len as u64));
        group.bench_function(*name, |b| {
            b.iter(|| {
                let docs = runtime.block_on(reader.load_file(path, Metadata::new()));
                black_box(docs.map(|d| d.len()).unwrap_or(0))
            })
        });
    }
    let pdf = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/labelled.pdf");
    group.throughput(Throughput::Elements(4));
    group.bench_function("pdf_4_pages", |b| {
        b.iter(|| {
            let docs = runtime.block_on(PDFReader::new().load_file(&pdf, Metadata::new()));
            black_box(docs.map(|d| d.len()).unwrap_or(0))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
