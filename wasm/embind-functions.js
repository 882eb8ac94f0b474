// --js-library (wasm.cmake): embind's registration of free functions, cut to what the
// boundary uses. bindings.cc binds a few functions of integers, each once, and registers
// them after embind's builtin types (static constructors run in that order), so their
// types are always resolved at once. Left out of embind's own version (about 0.7 KB gzip of
// JS):
// - overloads by argument count (exposePublicSymbol's table): every name is bound once;
// - the placeholder that throws UnboundTypeError naming the missing types while a type is
//   not yet registered: a function over a type that never registers (embind-types.js)
//   stays undefined instead;
// - dynCall for signatures with 64-bit integers ('j'): refused here instead;
// - extendError's named constructors and stack rewriting: a plain Error subclass.
mergeInto(LibraryManager.library, {
  _embind_register_function__deps: ['$craftInvokerFunction', '$heap32VectorToArray', '$readLatin1String',
    '$whenDependentTypesAreResolved', '$throwBindingError', '$getWasmTableEntry'],
  _embind_register_function: function(name, argCount, rawArgTypesAddr, signature, rawInvoker, fn) {
    var argTypes = heap32VectorToArray(argCount, rawArgTypesAddr);
    name = readLatin1String(name);
    if (readLatin1String(signature).includes('j') || Module.hasOwnProperty(name)) {
      throwBindingError('cannot bind ' + name + ': 64-bit integers or a second binding of the name');
    }
    rawInvoker = getWasmTableEntry(rawInvoker);
    whenDependentTypesAreResolved([], argTypes, function(argTypes) {
      Module[name] = craftInvokerFunction(name, [argTypes[0], null].concat(argTypes.slice(1)), null, rawInvoker, fn);
      return [];
    });
  },
  $extendError__deps: [],
  $extendError: function(baseErrorType, errorName) {
    var errorClass = function(message) {
      this.name = errorName;
      this.message = message;
      this.stack = new Error(message).stack;
    };
    errorClass.prototype = Object.create(baseErrorType.prototype);
    errorClass.prototype.constructor = errorClass;
    return errorClass;
  },
});
