//! Builder setters written once: a field set from a value, or an option
//! handed on to the component a wrapper holds.

/// `name => field: Type` setters: `self.field = value.into()`, then `self`.
/// Exported for the workspace's crates above core, not for users.
#[doc(hidden)]
#[macro_export]
macro_rules! setters {
    ($( $(#[$doc:meta])* $name:ident => $field:ident: $ty:ty ),+ $(,)?) => {$(
        $(#[$doc])*
        pub fn $name(mut self, value: $ty) -> Self {
            self.$field = value.into();
            self
        }
    )+};
}

/// `inner: name(Type)` setters of a wrapper: the option goes to `inner`'s
/// setter of the same name.
#[doc(hidden)]
#[macro_export]
macro_rules! wrapped_setters {
    ($inner:ident: $( $(#[$doc:meta])* $name:ident($ty:ty) ),+ $(,)?) => {$(
        $(#[$doc])*
        pub fn $name(mut self, value: $ty) -> Self {
            self.$inner = self.$inner.$name(value);
            self
        }
    )+};
}
