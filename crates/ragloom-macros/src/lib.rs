//! `#[tool]` and `#[tool_spec]`: turn plain Rust functions and `impl` blocks
//! into ragloom tools, with descriptions from doc comments and argument schemas from parameters.
//!
//! Use them through the facade (`ragloom::tool`, `ragloom::tool_spec`) or
//! directly from this crate with `ragloom-core`. Generated code reaches serde
//! and schemars through `ragloom_core::__private`, so users need neither as a
//! dependency. The crate to refer to is found in the user's `Cargo.toml`
//! (`ragloom`, else `ragloom-core`, renames included, via `proc-macro-crate`),
//! or given with `crate = path`.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote};
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprLit, FnArg, GenericArgument, ImplItem, ItemFn, ItemImpl, Lit, LitStr,
    Meta, Pat, PathArguments, ReturnType, Signature, Type,
};

/// Makes a [`FunctionTool`] from a function: `#[tool] fn add_numbers(..)`
/// keeps the function and adds `fn add_numbers_tool() -> FunctionTool`.
///
/// The tool's name is the function's; its description is
/// `name(x: int, y: int) -> int` (the signature in Python's notation, as
/// LlamaIndex writes it) then the doc comment; its argument schema has one
/// property per parameter, described by the parameter's doc comment.
/// Parameters must be `name: Type` with `Type: Deserialize + JsonSchema`
/// (`&str`, `&[T]` and `&T` are taken as `String`, `Vec<T>` and `T`);
/// `Option<T>` parameters are optional. `#[serde(..)]`/`#[schemars(..)]`
/// attributes on a parameter go to its field. The function may be `async`
/// and return anything implementing `ToolReturn` (a `Result` error reaches
/// the model as an error output).
///
/// Options: `#[tool(name = "..", description = "..", return_direct, crate = path)]`.
///
/// [`FunctionTool`]: https://docs.rs/ragloom-core/latest/ragloom_core/tools/struct.FunctionTool.html
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand_tool(attr.into(), item.into()) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Makes a `ToolSpec` of an `impl` block: its `pub` methods (or those named
/// in `functions = [..]`) become one tool each, described as `#[tool]`
/// describes functions (without `self`).
///
/// Methods take `&self` or no receiver. `to_tool_list` clones the value once
/// into an `Arc` shared by its tools, so the type must be `Clone + Send +
/// Sync + 'static` (keep shared state behind an `Arc`). A method may carry
/// `#[tool(name = "..", description = "..", return_direct)]` or `#[tool(skip)]`.
///
/// Options: `#[tool_spec(functions = ["a", "b"], crate = path)]`.
#[proc_macro_attribute]
pub fn tool_spec(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand_tool_spec(attr.into(), item.into()) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

#[derive(Default)]
struct ToolOptions {
    name: Option<String>,
    description: Option<String>,
    return_direct: bool,
    skip: bool,
    krate: Option<syn::Path>,
    functions: Option<Vec<String>>,
}

fn parse_options(attr: TokenStream2, allow_spec: bool) -> syn::Result<ToolOptions> {
    let mut opts = ToolOptions::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("name") {
            opts.name = Some(meta.value()?.parse::<LitStr>()?.value());
        } else if meta.path.is_ident("description") {
            opts.description = Some(meta.value()?.parse::<LitStr>()?.value());
        } else if meta.path.is_ident("return_direct") {
            opts.return_direct = true;
        } else if meta.path.is_ident("skip") {
            opts.skip = true;
        } else if meta.path.is_ident("crate") {
            opts.krate = Some(meta.value()?.parse::<syn::Path>()?);
        } else if allow_spec && meta.path.is_ident("functions") {
            let content;
            let value = meta.value()?;
            syn::bracketed!(content in value);
            let names = content.parse_terminated(|p| p.parse::<LitStr>(), syn::Token![,])?;
            opts.functions = Some(names.iter().map(LitStr::value).collect());
        } else {
            return Err(meta.error(
                "unknown option; expected `name`, `description`, `return_direct`, `skip`, `crate`",
            ));
        }
        Ok(())
    });
    parser.parse2(attr)?;
    Ok(opts)
}

/// The path of the crate holding `tools` and `__private`.
fn crate_path(explicit: Option<&syn::Path>) -> TokenStream2 {
    use proc_macro_crate::{FoundCrate, crate_name};
    if let Some(p) = explicit {
        return quote!(#p);
    }
    for (package, lib) in [("ragloom", "ragloom"), ("ragloom-core", "ragloom_core")] {
        match crate_name(package) {
            Ok(FoundCrate::Name(name)) => {
                let ident = syn::Ident::new(&name, Span::call_site());
                return quote!(::#ident);
            }
            // The package's own tests and examples see it under its library name.
            Ok(FoundCrate::Itself) => {
                let ident = syn::Ident::new(lib, Span::call_site());
                return quote!(::#ident);
            }
            Err(_) => {}
        }
    }
    quote!(::ragloom)
}

/// A doc comment's text: rustdoc's one leading space removed from each line.
fn doc_text(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|s| {
            s.lines()
                .map(|l| l.strip_prefix(' ').unwrap_or(l).to_owned())
                .collect::<Vec<_>>()
        })
        .collect();
    lines.join("\n").trim().to_owned()
}

/// The Python name LlamaIndex would print for a Rust type.
fn python_type(ty: &Type) -> String {
    match ty {
        Type::Reference(r) => python_type(&r.elem),
        Type::Paren(p) => python_type(&p.elem),
        Type::Group(g) => python_type(&g.elem),
        Type::Slice(s) => format!("List[{}]", python_type(&s.elem)),
        Type::Array(a) => format!("List[{}]", python_type(&a.elem)),
        Type::Tuple(t) if t.elems.is_empty() => "None".to_owned(),
        Type::Tuple(t) => {
            let items: Vec<String> = t.elems.iter().map(python_type).collect();
            format!("Tuple[{}]", items.join(", "))
        }
        Type::Path(p) => {
            let Some(seg) = p.path.segments.last() else {
                return "Any".to_owned();
            };
            let args: Vec<&Type> = match &seg.arguments {
                PathArguments::AngleBracketed(a) => a
                    .args
                    .iter()
                    .filter_map(|g| match g {
                        GenericArgument::Type(t) => Some(t),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let arg = |i: usize| args.get(i).map_or("Any".to_owned(), |t| python_type(t));
            match seg.ident.to_string().as_str() {
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64"
                | "u128" | "usize" => "int".to_owned(),
                "f32" | "f64" => "float".to_owned(),
                "bool" => "bool".to_owned(),
                "String" | "str" | "char" | "Cow" | "PathBuf" | "Path" => "str".to_owned(),
                "Vec" | "VecDeque" | "HashSet" | "BTreeSet" | "IndexSet" => {
                    format!("List[{}]", arg(0))
                }
                "Option" => format!("Optional[{}]", arg(0)),
                "HashMap" | "BTreeMap" | "IndexMap" | "Map" => {
                    format!("Dict[{}, {}]", arg(0), arg(1))
                }
                "Value" => "Any".to_owned(),
                "Result" | "Json" | "Box" | "Arc" | "Rc" => arg(0),
                other => other.to_owned(),
            }
        }
        _ => "Any".to_owned(),
    }
}

fn is_option(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

/// One parameter of a tool function.
struct Param {
    ident: syn::Ident,
    /// The field's type (references taken as owned values).
    field_ty: Type,
    /// How the field is passed: by value or by reference.
    by_ref: bool,
    doc: String,
    /// `#[serde]`/`#[schemars]` attributes moved to the field.
    field_attrs: Vec<Attribute>,
    py: String,
}

/// Reads the parameters of `sig`, stripping their attributes (rustc rejects
/// doc comments on parameters). Returns whether it has a `&self` receiver.
fn take_params(sig: &mut Signature) -> syn::Result<(Vec<Param>, bool)> {
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new(
            sig.generics.span(),
            "tool functions cannot be generic: the argument schema needs concrete types",
        ));
    }
    let mut params = Vec::new();
    let mut has_self = false;
    for input in sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(r) => {
                if r.reference.is_none() || r.mutability.is_some() {
                    return Err(syn::Error::new(
                        r.span(),
                        "tool methods take `&self` (tools share one value and may run concurrently)",
                    ));
                }
                has_self = true;
            }
            FnArg::Typed(pt) => {
                let attrs = std::mem::take(&mut pt.attrs);
                let doc = doc_text(&attrs);
                let field_attrs: Vec<Attribute> = attrs
                    .into_iter()
                    .filter(|a| a.path().is_ident("serde") || a.path().is_ident("schemars"))
                    .collect();
                let Pat::Ident(pi) = &*pt.pat else {
                    return Err(syn::Error::new(
                        pt.pat.span(),
                        "tool parameters must be plain names (`x: i64`): the name becomes the argument's name",
                    ));
                };
                let ident = pi.ident.clone();
                let (field_ty, by_ref) = match &*pt.ty {
                    Type::Reference(r) => {
                        if r.mutability.is_some() {
                            return Err(syn::Error::new(
                                r.span(),
                                "tool parameters cannot be `&mut`",
                            ));
                        }
                        (owned_type(&r.elem), true)
                    }
                    Type::ImplTrait(_) => {
                        return Err(syn::Error::new(
                            pt.ty.span(),
                            "tool parameters need concrete types, not `impl Trait`",
                        ));
                    }
                    other => (other.clone(), false),
                };
                let py = python_type(&pt.ty);
                params.push(Param {
                    ident,
                    field_ty,
                    by_ref,
                    doc,
                    field_attrs,
                    py,
                });
            }
        }
    }
    Ok((params, has_self))
}

/// `str` → `String`, `[T]` → `Vec<T>`, others unchanged.
fn owned_type(ty: &Type) -> Type {
    match ty {
        Type::Path(p) if p.path.is_ident("str") => syn::parse_quote!(::std::string::String),
        Type::Slice(s) => {
            let elem = &s.elem;
            syn::parse_quote!(::std::vec::Vec<#elem>)
        }
        other => other.clone(),
    }
}

/// `name(x: int, y: Optional[str] = None) -> int` then the doc comment.
fn default_description(name: &str, params: &[Param], output: &ReturnType, doc: &str) -> String {
    let sig: Vec<String> = params
        .iter()
        .map(|p| {
            let arg = p.ident.to_string();
            let arg = arg.strip_prefix("r#").unwrap_or(&arg);
            if is_option(&p.field_ty) {
                format!("{arg}: {} = None", p.py)
            } else {
                format!("{arg}: {}", p.py)
            }
        })
        .collect();
    let ret = match output {
        ReturnType::Default => String::new(),
        ReturnType::Type(_, ty) => format!(" -> {}", python_type(ty)),
    };
    format!("{name}({}){ret}\n{doc}", sig.join(", "))
        .trim()
        .to_owned()
}

/// The code building one `FunctionTool`; `call` is the path called with the arguments.
fn tool_constructor(
    krate: &TokenStream2,
    sig: &Signature,
    params: &[Param],
    opts: &ToolOptions,
    doc: &str,
    call: TokenStream2,
) -> TokenStream2 {
    let fn_name = sig.ident.to_string();
    let fn_name = fn_name.strip_prefix("r#").unwrap_or(&fn_name).to_owned();
    let name = opts.name.clone().unwrap_or_else(|| fn_name.clone());
    let description = opts
        .description
        .clone()
        .unwrap_or_else(|| default_description(&name, params, &sig.output, doc));
    let serde_crate = format!("{}::__private::serde", krate).replace(' ', "");
    let schemars_crate = format!("{}::__private::schemars", krate).replace(' ', "");
    let fields = params.iter().map(|p| {
        let ident = &p.ident;
        let ty = &p.field_ty;
        let attrs = &p.field_attrs;
        let doc = (!p.doc.is_empty()).then(|| {
            let d = &p.doc;
            quote!(#[doc = #d])
        });
        quote!(#doc #(#attrs)* #ident: #ty)
    });
    let args = params.iter().map(|p| {
        let ident = &p.ident;
        if p.by_ref {
            quote!(&__args.#ident)
        } else {
            quote!(__args.#ident)
        }
    });
    let return_direct = opts.return_direct;
    let body = if sig.asyncness.is_some() {
        quote! {
            #krate::tools::FunctionTool::from_async_fn(
                #name,
                ::std::option::Option::Some(#description),
                move |__args: __ToolArgs| {
                    let __this = ::std::clone::Clone::clone(&__this);
                    async move {
                        let _ = &__this;
                        #call(#(#args),*).await
                    }
                },
            )
        }
    } else {
        quote! {
            #krate::tools::FunctionTool::from_fn(
                #name,
                ::std::option::Option::Some(#description),
                move |__args: __ToolArgs| {
                    let _ = &__this;
                    #call(#(#args),*)
                },
            )
        }
    };
    quote! {{
        #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
        #[serde(crate = #serde_crate)]
        #[schemars(crate = #schemars_crate)]
        #[allow(non_camel_case_types, dead_code)]
        struct __ToolArgs { #(#fields),* }
        #body.return_direct(#return_direct)
    }}
}

fn expand_tool(attr: TokenStream2, item: TokenStream2) -> syn::Result<TokenStream2> {
    let opts = parse_options(attr, false)?;
    let mut func: ItemFn = syn::parse2(item)?;
    let (params, has_self) = take_params(&mut func.sig)?;
    if has_self {
        return Err(syn::Error::new(
            func.sig.span(),
            "`#[tool]` is for free functions; put `#[tool_spec]` on the impl block for methods",
        ));
    }
    let krate = crate_path(opts.krate.as_ref());
    let doc = doc_text(&func.attrs);
    let ident = &func.sig.ident;
    let call = quote!(#ident);
    let constructor = tool_constructor(&krate, &func.sig, &params, &opts, &doc, call);
    let vis = &func.vis;
    let tool_fn = format_ident!("{}_tool", ident.to_string().trim_start_matches("r#"));
    let tool_doc = format!("The tool made from [`{ident}`] by `#[tool]`.");
    Ok(quote! {
        #func

        #[doc = #tool_doc]
        #vis fn #tool_fn() -> #krate::tools::FunctionTool {
            let __this = ();
            #constructor
        }
    })
}

fn expand_tool_spec(attr: TokenStream2, item: TokenStream2) -> syn::Result<TokenStream2> {
    let opts = parse_options(attr, true)?;
    let mut imp: ItemImpl = syn::parse2(item)?;
    if !imp.generics.params.is_empty() || imp.trait_.is_some() {
        return Err(syn::Error::new(
            imp.span(),
            "`#[tool_spec]` goes on a plain, non-generic `impl Type { .. }` block",
        ));
    }
    let krate = crate_path(opts.krate.as_ref());
    let self_ty = imp.self_ty.clone();
    let mut names = Vec::new();
    let mut constructors = Vec::new();
    let mut found = Vec::new();
    for item in imp.items.iter_mut() {
        let ImplItem::Fn(method) = item else {
            continue;
        };
        // Per-method options; the attribute is removed either way.
        let mut method_opts = ToolOptions::default();
        let mut kept = Vec::new();
        for a in std::mem::take(&mut method.attrs) {
            if a.path().is_ident("tool") {
                method_opts = match &a.meta {
                    Meta::List(list) => parse_options(list.tokens.clone(), false)?,
                    _ => ToolOptions::default(),
                };
            } else {
                kept.push(a);
            }
        }
        method.attrs = kept;
        let fn_name = method.sig.ident.to_string();
        let selected = match &opts.functions {
            Some(list) => list.contains(&fn_name),
            None => matches!(method.vis, syn::Visibility::Public(_)) && !method_opts.skip,
        };
        if !selected {
            continue;
        }
        found.push(fn_name.clone());
        let (params, has_self) = take_params(&mut method.sig)?;
        let doc = doc_text(&method.attrs);
        let ident = &method.sig.ident;
        let call = if has_self {
            quote!(__this.#ident)
        } else {
            quote!(<#self_ty>::#ident)
        };
        names.push(
            method_opts
                .name
                .clone()
                .unwrap_or_else(|| fn_name.trim_start_matches("r#").to_owned()),
        );
        let constructor = tool_constructor(&krate, &method.sig, &params, &method_opts, &doc, call);
        constructors.push(quote! {{
            let __this = ::std::sync::Arc::clone(&__shared);
            ::std::sync::Arc::new(#constructor) as ::std::sync::Arc<dyn #krate::tools::Tool>
        }});
    }
    if let Some(list) = &opts.functions {
        for wanted in list {
            if !found.contains(wanted) {
                return Err(syn::Error::new(
                    Span::call_site(),
                    format!(
                        "`functions` names `{wanted}`, which is not a method of this impl block"
                    ),
                ));
            }
        }
    }
    // Taking `&self` and no receiver both work by sharing one clone.
    Ok(quote! {
        #imp

        impl #krate::tools::ToolSpec for #self_ty {
            fn spec_functions(&self) -> ::std::vec::Vec<::std::string::String> {
                ::std::vec![#(::std::string::String::from(#names)),*]
            }

            fn to_tool_list(&self) -> ::std::vec::Vec<::std::sync::Arc<dyn #krate::tools::Tool>> {
                #[allow(unused_variables)]
                let __shared = ::std::sync::Arc::new(::std::clone::Clone::clone(self));
                ::std::vec![#(#constructors),*]
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool_error(attr: TokenStream2, item: TokenStream2) -> String {
        match expand_tool(attr, item) {
            Ok(ts) => panic!("expected an error, got {ts}"),
            Err(e) => e.to_string(),
        }
    }

    fn spec_error(attr: TokenStream2, item: TokenStream2) -> String {
        match expand_tool_spec(attr, item) {
            Ok(ts) => panic!("expected an error, got {ts}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn misuse_gets_clear_compile_errors() {
        let cases = [
            (
                tool_error(
                    quote!(),
                    quote!(
                        fn f<T>(x: T) {}
                    ),
                ),
                "cannot be generic",
            ),
            (
                tool_error(
                    quote!(),
                    quote!(
                        fn f(x: impl Clone) {}
                    ),
                ),
                "not `impl Trait`",
            ),
            (
                tool_error(
                    quote!(),
                    quote!(
                        fn f(x: &mut String) {}
                    ),
                ),
                "cannot be `&mut`",
            ),
            (
                tool_error(
                    quote!(),
                    quote!(
                        fn f((a, b): (i32, i32)) {}
                    ),
                ),
                "plain names",
            ),
            (
                tool_error(
                    quote!(),
                    quote!(
                        fn f(&self) {}
                    ),
                ),
                "`#[tool_spec]`",
            ),
            (
                tool_error(
                    quote!(colour = "red"),
                    quote!(
                        fn f() {}
                    ),
                ),
                "unknown option",
            ),
            (
                spec_error(quote!(), quote!(impl S { pub fn f(&mut self) {} })),
                "take `&self`",
            ),
            (
                spec_error(
                    quote!(functions = ["g"]),
                    quote!(impl S { pub fn f(&self) {} }),
                ),
                "`g`",
            ),
            (
                spec_error(
                    quote!(),
                    quote!(
                        impl<T> S<T> {
                            pub fn f(&self) {}
                        }
                    ),
                ),
                "non-generic",
            ),
        ];
        for (message, expected) in cases {
            assert!(message.contains(expected), "{message:?} lacks {expected:?}");
        }
    }

    #[test]
    fn python_names_of_rust_types() {
        let name =
            |ty: TokenStream2| python_type(&syn::parse2(ty).unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(name(quote!(u8)), "int");
        assert_eq!(name(quote!(&str)), "str");
        assert_eq!(name(quote!(Option<Vec<f32>>)), "Optional[List[float]]");
        assert_eq!(
            name(quote!(std::collections::HashMap<String, bool>)),
            "Dict[str, bool]"
        );
        assert_eq!(name(quote!(Result<Json<Weather>, String>)), "Weather");
        assert_eq!(name(quote!(&[u64])), "List[int]");
        assert_eq!(name(quote!(())), "None");
    }

    #[test]
    fn parameter_doc_comments_are_stripped_from_the_function() {
        let out = expand_tool(
            quote!(crate = ::ragloom_core),
            quote! {
                /// Doc.
                fn f(
                    /// The x.
                    #[serde(default)]
                    x: i64,
                ) -> i64 { x }
            },
        )
        .unwrap_or_else(|e| panic!("{e}"))
        .to_string();
        // The function keeps no attribute on `x`; the field gets both.
        assert!(out.contains("fn f (x : i64 ,)"), "{out}");
        assert!(out.contains("# [doc = \"The x.\"] # [serde"), "{out}");
        assert!(out.contains("# [serde (default)] x : i64"), "{out}");
        assert!(
            out.contains("fn f_tool () -> :: ragloom_core :: tools :: FunctionTool"),
            "{out}"
        );
    }
}
