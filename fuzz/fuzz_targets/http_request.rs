#![no_main]

libfuzzer_sys::fuzz_target!(
    init: ragloom_fuzz::let_the_api_catch_panics(),
    |data: &[u8]| ragloom_fuzz::http_request(data)
);
