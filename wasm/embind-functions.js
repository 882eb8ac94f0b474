// --js-library (wasm.cmake): embind's registration and calling of free functions, cut to
// what the boundary uses. bindings.cc binds a few functions of integers, each once. Its
// static constructor runs before embind's own, which registers the builtin types, so a
// function waits until its types are registered. What is left of embind's JavaScript is
// one table of the registered types (int and void: embind-builtins.cc), the functions
// still waiting for theirs, and one invoker per function. Left out of embind's own
// version (about 1.5 KB gzip of JS):
// - the dependency graph of types (whenDependentTypesAreResolved, registerType with its
//   checks, BindingError and InternalError): a function over a type that never registers
//   (any but int and void) stays undefined on the module;
// - overloads by argument count (exposePublicSymbol's table): every name is bound once;
// - dynCall for signatures with 64-bit integers ('j'): refused here instead;
// - class methods and argument destructors in the invoker: integers and void have none;
// - reading integers from memory (readValueFromPointer), which only class properties,
//   value objects and containers use;
// - the 256 one-character strings embind reads names with: names are short and read once.
mergeInto(LibraryManager.library, {
  // Registered types by their type id: [fromWireType, toWireType].
  $embindTypes: {},
  // Functions waiting for their types: each binds itself and says true once they are there.
  $embindWaiting: [],
  $embindBindWaiting__deps: ['$embindWaiting'],
  $embindBindWaiting: function() {
    for (var i = embindWaiting.length; i--;) {
      if (embindWaiting[i]()) embindWaiting.splice(i, 1);
    }
  },
  $embindName: function(ptr) {
    var name = '';
    while (HEAPU8[ptr]) name += String.fromCharCode(HEAPU8[ptr++]);
    return name;
  },
  _embind_register_function__deps: ['$embindName', '$embindTypes', '$embindWaiting', '$embindBindWaiting'],
  _embind_register_function: function(name, argCount, rawArgTypesAddr, signature, rawInvoker, fn) {
    // The type ids of the return value, then of the parameters (no `this`).
    var ids = [];
    for (var i = 0; i < argCount; ++i) ids.push(HEAP32[(rawArgTypesAddr >> 2) + i]);
    name = embindName(name);
    if (embindName(signature).includes('j')) throw new Error('cannot bind ' + name + ': 64-bit integers');
    var invoker = wasmTable.get(rawInvoker);
    var expected = argCount - 1;
    embindWaiting.push(function() {
      var types = ids.map((id) => embindTypes[id]);
      if (types.includes(undefined)) return false;
      if (Module.hasOwnProperty(name)) throw new Error('cannot bind ' + name + ' twice');
      Module[name] = function() {
        if (arguments.length !== expected) {
          throw new Error(name + ' called with ' + arguments.length + ' arguments, expected ' + expected);
        }
        var args = [fn];
        for (var i = 0; i < expected; ++i) args.push(types[i + 1][1](arguments[i]));
        return types[0][0](invoker.apply(null, args));
      };
      return true;
    });
    embindBindWaiting();
  },
  // Only int gets here (embind-builtins.cc): its values cross the boundary as they are.
  baton_embind_register_int__deps: ['$embindTypes', '$embindBindWaiting'],
  baton_embind_register_int: function(primitiveType) {
    var same = (value) => value;
    embindTypes[primitiveType] = [same, same];
    embindBindWaiting();
  },
  _embind_register_void__deps: ['$embindTypes', '$embindBindWaiting'],
  _embind_register_void: function(rawType, name) {
    embindTypes[rawType] = [() => undefined];
    embindBindWaiting();
  },
});
