import MdocCBOR
